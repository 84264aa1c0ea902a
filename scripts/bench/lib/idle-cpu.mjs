// CPU an open, listening ovn-psample socket costs while no sample arrives: it should sleep in the
// kernel, not poll. Prints one JSON line: CPU time of the whole process (all threads) in % of one
// core, and how often it woke up. --baseline measures the same process without the socket, so the
// socket's own share can be told from Node's.
//
//   node idle-cpu.mjs --group G --family F --rcvbuf BYTES --seconds S [--baseline]
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { openPsample } from 'ovn-psample';

// Start-up work (module loading, JIT, the reader thread's start) is not idle time.
const SETTLE_MS = 1000;

const { values } = parseArgs({
  options: {
    group: { type: 'string' },
    family: { type: 'string' },
    rcvbuf: { type: 'string' },
    seconds: { type: 'string' },
    baseline: { type: 'boolean', default: false },
  },
});
const seconds = Number(values.seconds);

const socket = values.baseline
  ? undefined
  : openPsample({
      source: { protocol: 'usersock', familyId: Number(values.family), groupId: Number(values.group) },
      receiveBufferBytes: Number(values.rcvbuf),
    });
let samples = 0;
socket?.on('sample', () => {
  samples += 1;
});
await sleep(SETTLE_MS);

const cpuBefore = process.cpuUsage();
const usageBefore = process.resourceUsage();
const wallBefore = performance.now();
await sleep(seconds * 1000);
const cpu = process.cpuUsage(cpuBefore);
const usageAfter = process.resourceUsage();
const wallSeconds = (performance.now() - wallBefore) / 1000;
socket?.close();

const cpuSeconds = (cpu.user + cpu.system) / 1e6;
const wakeups =
  usageAfter.voluntaryContextSwitches -
  usageBefore.voluntaryContextSwitches +
  (usageAfter.involuntaryContextSwitches - usageBefore.involuntaryContextSwitches);
process.stdout.write(
  `${JSON.stringify({
    seconds: wallSeconds,
    cpuPercent: (100 * cpuSeconds) / wallSeconds,
    userMs: cpu.user / 1000,
    systemMs: cpu.system / 1000,
    contextSwitchesPerSecond: wakeups / wallSeconds,
    samples,
  })}\n`,
);
