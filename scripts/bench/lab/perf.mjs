// bench:lab --perf: where a consumer's CPU goes per function during each measured burst, the
// kernel's share included (recvmmsg, the copy into the output file, page faults), which V8's
// --cpu-prof cannot see. The guest image has no perf: the host ships its own (ship-perf.sh) to
// TOOLS/perf. It samples on a software clock (TCG emulates no PMU); what the kernel does on the
// consumer's behalf runs in its context and is sampled with it. Once the consumer has stopped,
// perf report writes the profile of the consumer's threads as text to OUT/profiles.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BenchRunError } from './measure.mjs';
import { cpuNs } from './proc.mjs';
import { BenchSetupError } from './shell.mjs';

// 1 ms between samples: a 5 s burst of a consumer busy a third of the time gets ~2,000 samples.
const FREQUENCY_HZ = 1000;
const DATA = '/tmp/bench-perf.data';
// perf starts, maps its libraries and reads every process's memory maps under TCG before it acks.
const ATTACH_TIMEOUT_MS = 60_000;
const STDERR_KEPT = 4096;
// Functions below this share of the samples only lengthen the listing.
const SYMBOL_PERCENT_LIMIT = '0.1';
const CALL_GRAPH_PERCENT_LIMIT = '2';
const INCLUSIVE_PERCENT_LIMIT = '1';
// Past V8's entry frames a frame-pointer walk reads stack words as return addresses.
const CALL_GRAPH_MAX_STACK = '40';

// Node writes the names of its JIT code to /tmp/perf-PID.map, where perf report finds them.
const NODE_ARGS = ['--perf-basic-prof'];

/** The host's perf in the guest (TOOLS/perf/perf, its libraries in TOOLS/perf/lib), checked to run. */
export function guestPerf({ tools, out }) {
  const perf = join(tools, 'perf', 'perf');
  if (!existsSync(perf)) {
    throw new BenchSetupError(
      `${perf} is missing: the host ships its perf there with --perf (scripts/bench/lab/ship-perf.sh); run 'npm run bench:lab -- --perf'`,
    );
  }
  const env = { ...process.env, LD_LIBRARY_PATH: join(tools, 'perf', 'lib') };
  const perfSync = (args) => execFileSync(perf, args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
  let version;
  try {
    version = perfSync(['--version']).trim();
  } catch (error) {
    throw new BenchSetupError(
      `the host's perf does not run in the guest: ${String(error.stderr ?? error.message).trim()} ` +
        '(a shared library scripts/bench/lab/ship-perf.sh left out?)',
    );
  }
  const profiles = join(out, 'profiles');
  mkdirSync(profiles, { recursive: true });
  return {
    version,
    describe: `${version}, -e cpu-clock -F ${FREQUENCY_HZ} -g --all-cpus over each measured burst and its drain, the consumer's samples in ${profiles}`,
    nodeArgs: NODE_ARGS,
    /** A recorder for the run NAME (e.g. ovn-10000-json+ovn-round1): OUT/profiles/NAME.txt. */
    forRun: (name) => ({
      record: (pid) => record(perf, env, pid, (figures) => report(perfSync, name, join(profiles, `${name}.txt`), pid, figures)),
    }),
  };
}

/**
 * Starts perf on every CPU, events off, and switches them on through its control pipe: once perf
 * acks, it samples. stop() ends the recording; report(figures) writes PID's profile afterwards.
 * Every CPU, not `-p PID`: a task's own events are switched out and in, their timer cancelled and
 * armed again, at each of its context switches, which under TCG cost the C reader (two switches
 * per sample) 40 % more CPU per sample; events of a CPU stay put.
 */
async function record(perf, env, pid, report) {
  // perf would keep an earlier run's file as DATA.old, and a failed run may have left one.
  rmSync(DATA, { force: true });
  const args = [
    'record',
    '-e',
    'cpu-clock',
    '-F',
    String(FREQUENCY_HZ),
    '-g',
    '--all-cpus',
    '-o',
    DATA,
    // Off until 'enable' on fd 3, acked on fd 4; no build-id pass over the binaries after it.
    '-D',
    '-1',
    '--control',
    'fd:3,4',
    '--no-buildid',
    '--no-buildid-cache',
  ];
  const child = spawn(perf, args, { env, stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr = `${stderr}${chunk}`.slice(-STDERR_KEPT);
  });
  const closed = new Promise((resolve) => child.on('close', (code, signal) => resolve(signal ?? code)));
  const failed = (what) => new BenchRunError(`perf record for pid ${pid} ${what}: ${stderr.trim() || 'no message'}`);
  try {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(failed(`did not start sampling within ${ATTACH_TIMEOUT_MS / 1000} s`)), ATTACH_TIMEOUT_MS);
      child.on('error', (error) => reject(failed(`could not start (${error.message})`)));
      closed.then((exit) => reject(failed(`exited (${exit}) before it sampled`)));
      child.stdio[4].on('data', (data) => {
        if (!String(data).includes('ack')) return;
        clearTimeout(timer);
        resolve();
      });
      child.stdio[3].write('enable\n');
    });
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  const perfCpuAtStart = cpuNs(child.pid);
  let perfCpuNs;
  return {
    /** perf writes its data on SIGINT and exits (re-raising SIGINT). */
    async stop() {
      // perf's own CPU while it sampled: not in the consumer's figures, but in the guest's.
      perfCpuNs = cpuNs(child.pid) - perfCpuAtStart;
      child.kill('SIGINT');
      const exit = await closed;
      if (!existsSync(DATA)) throw failed(`wrote no ${DATA} (exit ${exit})`);
    },
    kill: () => child.kill('SIGKILL'),
    report: (figures) => report({ ...figures, perfCpuSeconds: perfCpuNs / 1e9 }),
  };
}

// perf pads every line to its longest symbol (C++ templates run to hundreds of columns), and adds
// a tip (or that it has no tips.txt) and empty comment lines.
const NOISE = /^#( \(.*\)| To display the perf\.data header info.*)?$/;
function readable(text) {
  return text
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => !NOISE.test(line))
    .join('\n');
}

/**
 * PID's samples per shared object, all its threads together. perf report's --pid filters the
 * entries it has merged by their sort keys, so without a thread among the keys it keeps or drops
 * whole entries that other processes share (the kernel's, libc's, node's): these totals come from
 * perf script's samples, each with its own thread.
 */
function sharedObjects(perfSync, pid) {
  const counts = new Map();
  let total = 0;
  for (const line of perfSync(['script', '-i', DATA, '--pid', String(pid), '-F', 'tid,ip,dso', '-G']).split('\n')) {
    const dso = /\(([^()]*)\)$/.exec(line.trim())?.[1];
    if (dso === undefined) continue;
    counts.set(dso, (counts.get(dso) ?? 0) + 1);
    total++;
  }
  return [
    `# ${total} samples`,
    '# Overhead  Samples  Shared Object',
    ...[...counts]
      .sort((a, b) => b[1] - a[1])
      .map(([dso, n]) => `${((100 * n) / total).toFixed(2).padStart(9)}% ${String(n).padStart(8)}  ${dso}`),
    '',
  ].join('\n');
}

/**
 * Writes the profile of the recording in DATA to FILE: by shared object, by thread and shared
 * object, by function alone and with its callees, and the hottest functions' callers, each of
 * PID's threads apart. FIGURES (the run's CPU time from /proc, samples received) head it, so
 * perf's sample count can be checked against the CPU it should cover.
 */
function report(perfSync, name, file, pid, figures) {
  // pid (a thread, despite its name) among the keys keeps --pid exact; shares of PID's samples.
  const only = ['--pid', String(pid), '--percentage', 'relative'];
  const view = (title, args) => [
    `## ${title}: perf report ${[...only, ...args].join(' ')}`,
    readable(perfSync(['report', '-i', DATA, '--stdio', ...only, ...args])),
  ];
  try {
    const sections = [
      `# ${name}: pid ${pid}, cpu-clock at ${FREQUENCY_HZ} Hz from the burst's start until the run's figures were taken`,
      `# the consumer's CPU time meanwhile (/proc): ${figures.cpuSeconds.toFixed(2)} s, ${figures.received} samples received; ` +
        `perf record's own: ${figures.perfCpuSeconds.toFixed(2)} s`,
      `## by shared object, all threads: perf script --pid ${pid} -F tid,ip,dso, counted`,
      sharedObjects(perfSync, pid),
      ...view('by thread and shared object', ['--no-children', '--sort', 'pid,dso', '-g', 'none', '--show-nr-samples']),
      ...view('by thread and function', ['--no-children', '--sort', 'pid,dso,sym', '-g', 'none', '--percent-limit', SYMBOL_PERCENT_LIMIT]),
      // With its callees: the syscalls (__x64_sys_write, __x64_sys_recvmmsg), page faults
      // (asm_exc_page_fault) and JavaScript functions, each with all the work below it.
      ...view('by thread and function with its callees', [
        '--children',
        '--sort',
        'pid,dso,sym',
        '-g',
        'none',
        '--percent-limit',
        INCLUSIVE_PERCENT_LIMIT,
      ]),
      ...view('callers of the hottest functions', [
        '--no-children',
        '--sort',
        'pid,dso,sym',
        '-g',
        'graph,0.5,callee',
        '--percent-limit',
        CALL_GRAPH_PERCENT_LIMIT,
        '--max-stack',
        CALL_GRAPH_MAX_STACK,
      ]),
    ];
    writeFileSync(file, `${sections.join('\n')}\n`);
    return file;
  } catch (error) {
    throw new BenchRunError(`perf report for ${file} failed: ${String(error.stderr ?? error.message).trim()}`);
  } finally {
    rmSync(DATA, { force: true });
    rmSync(`/tmp/perf-${pid}.map`, { force: true });
  }
}
