// What the lab benchmark reads about a consumer from outside, so every consumer is measured the
// same way whatever it reports itself: CPU time of all its threads, peak RSS, and the kernel's
// view of its netlink sockets (bytes waiting in the receive queue, drops).
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

const NETLINK_GENERIC = 16;
const CLOCK_TICKS_PER_SECOND = 100;

function read(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined; // the task or process is gone
  }
}

/** utime + stime of the whole thread group, dead threads included; 10 ms resolution. */
function statCpuNs(pid) {
  const stat = read(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of proc(5), counted from the state (field 3) here.
  return ((Number(fields[11]) + Number(fields[12])) * 1e9) / CLOCK_TICKS_PER_SECOND;
}

/**
 * CPU time of every thread of PID in ns: the sum of the scheduler's exact run times
 * (/proc/PID/task/TID/schedstat), or the tick-sampled /proc/PID/stat when the kernel does not
 * report them. A consumer's threads live as long as it does, so no thread's time is lost.
 */
export function cpuNs(pid) {
  let tasks;
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  let total = 0;
  for (const tid of tasks) {
    const schedstat = read(`/proc/${pid}/task/${tid}/schedstat`);
    if (schedstat === undefined) return statCpuNs(pid);
    total += Number(schedstat.split(' ')[0]);
  }
  return total > 0 ? total : statCpuNs(pid);
}

/**
 * CPU time of PID's threads in ns by name, for telling where a consumer spends it: `main` (the
 * thread group leader: Node's JavaScript thread), `psample-reader` (ovn-psample's reader thread),
 * `other` (V8's and libuv's helpers). Only live threads: compare two readings of the same threads.
 */
export function threadCpuNs(pid) {
  const byName = { main: 0, 'psample-reader': 0, other: 0 };
  let tasks;
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  for (const tid of tasks) {
    const schedstat = read(`/proc/${pid}/task/${tid}/schedstat`);
    const comm = read(`/proc/${pid}/task/${tid}/comm`)?.trim();
    if (schedstat === undefined || comm === undefined) continue;
    const name = tid === String(pid) ? 'main' : comm === 'psample-reader' ? comm : 'other';
    byName[name] += Number(schedstat.split(' ')[0]);
  }
  return byName;
}

/** Peak resident set (VmHWM) in MiB. */
export function peakRssMb(pid) {
  const match = /^VmHWM:\s+(\d+) kB$/m.exec(read(`/proc/${pid}/status`) ?? '');
  return match ? Number(match[1]) / 1024 : undefined;
}

/**
 * The generic netlink sockets PID holds, as /proc/net/netlink shows them: queued bytes (Rmem)
 * and the kernel's drop counter (sk_drops), summed.
 */
export function netlinkSockets(pid) {
  const inodes = new Set();
  let fds;
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return undefined;
  }
  for (const fd of fds) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(match[1]);
    } catch {
      // closed meanwhile
    }
  }
  // sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode
  const result = { sockets: 0, queuedBytes: 0, drops: 0 };
  for (const line of (read(`/proc/${pid}/net/netlink`) ?? '').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10 || Number(f[1]) !== NETLINK_GENERIC || !inodes.has(f[9])) continue;
    result.sockets += 1;
    result.queuedBytes += Number(f[4]);
    result.drops += Number(f[8]);
  }
  return result;
}
