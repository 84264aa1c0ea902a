// npm run bench:receive [-- --messages N --repetitions R ...]   (after npm run build; as root)
//
// How fast ovn-psample turns psample multicast into PsampleMessage objects in a JS callback,
// compared with ref-reader.c, a bare C recv loop that only counts: the most any userspace reader
// gets here. sender.c multicasts the same N realistic messages on NETLINK_USERSOCK for both
// readers; each reader joins before the sender starts and has the same receive buffer, and its
// rate is received / (last - first arrival). Runs alternate ref/ours and the medians are compared,
// because the sender and the reader share two cores with whatever else the machine is doing.
// Both readers usually keep up with the one sender this machine can run, so a second measure
// finds the readers' own ceiling: the reader is stopped (SIGSTOP) while the sender fills its
// receive buffer, then resumed, and drains the backlog with the cores to itself.
// Then, at a paced rate (--latency-rate, 10,000/s; ref and ours alternating, medians): CPU per
// message of each reader and ours' send-to-callback latency; and the CPU an idle open socket costs.
// The last line is the verdict:
//   RESULT ratio=<ours/ref> ours=<msgs/s> ref=<msgs/s> sent=<n> received=<n> dropped=<n> unaccounted=<n>
//          cpu_ratio_paced=<ours/ref CPU per message at --latency-rate> p99_ms=<ours, send -> JS callback>
// where sent/received/dropped add up all of ovn-psample's throughput runs (live and drain), and
// unaccounted adds up |sent - received - dropped| of each run, so no run's error can hide another's.
import { existsSync } from 'node:fs';
import { setPriority } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runToCompletion, startChild, withTimeout } from './lib/child.mjs';
import { compileTools } from './lib/compile.mjs';
import { median } from './lib/percentiles.mjs';

// A failed step says what to do in its message; a stack trace would only bury that.
process.on('uncaughtException', (error) => {
  console.error(error.code ? `${error.code}: ${error.message}` : error);
  process.exit(1);
});

const benchDir = dirname(fileURLToPath(import.meta.url));
const projectRoot = join(benchDir, '..', '..');
const READER_EXIT_TIMEOUT_MS = 60_000;

const { values: options } = parseArgs({
  options: {
    messages: { type: 'string', default: '500000' },
    repetitions: { type: 'string', default: '5' },
    group: { type: 'string', default: '29' },
    'rcvbuf-bytes': { type: 'string', default: String(32 * 1024 * 1024) },
    // The kernel charges about 830 bytes of a doubled 128 MiB buffer per message: room for ~320k.
    'drain-messages': { type: 'string', default: '200000' },
    'drain-rcvbuf-bytes': { type: 'string', default: String(128 * 1024 * 1024) },
    'latency-rate': { type: 'string', default: '10000' },
    'latency-seconds': { type: 'string', default: '10' },
    'latency-repetitions': { type: 'string', default: '3' },
    'idle-seconds': { type: 'string', default: '10' },
  },
});
const messages = Number(options.messages);
const repetitions = Number(options.repetitions);
const group = Number(options.group);
const rcvbuf = Number(options['rcvbuf-bytes']);
const drainMessages = Number(options['drain-messages']);
const drainRcvbuf = Number(options['drain-rcvbuf-bytes']);
const latencyRate = Number(options['latency-rate']);
const latencySeconds = Number(options['latency-seconds']);
const latencyRepetitions = Number(options['latency-repetitions']);
const idleSeconds = Number(options['idle-seconds']);
// A family id of its own: messages from anyone else on the same group count as foreign, not ours.
const family = 0x7000 + Math.floor(Math.random() * 0x1000);

if (!existsSync(join(projectRoot, 'dist', 'index.js'))) {
  console.error('dist/index.js is missing: run `npm run build` first, then `npm run bench:receive`.');
  process.exit(1);
}
if (process.getuid() !== 0) {
  console.error('run the benchmark as root: joining netlink multicast groups and raising priority need it.');
  process.exit(1);
}
if (!Number.isInteger(group) || group < 1 || group > 32) {
  console.error(`--group ${options.group}: NETLINK_USERSOCK has multicast groups 1 to 32; pick one of those.`);
  process.exit(1);
}

// Builds and tests elsewhere on this small machine would otherwise decide who gets a core; the
// participants inherit the priority, so both readers and the sender are treated alike.
const BENCH_NICENESS = -10;
setPriority(BENCH_NICENESS);

const { tools, remove } = compileTools(benchDir, ['sender', 'ref-reader']);
process.on('exit', remove);
process.on('SIGINT', () => process.exit(130));

const common = ['--group', String(group), '--family', String(family)];
const oursReader = join(benchDir, 'lib', 'ours-reader.mjs');
const readers = {
  ref: (args) => startChild(tools['ref-reader'], args),
  ours: (args) => startChild(process.execPath, [oursReader, ...args]),
};

// `stopped`: the reader sleeps while the sender runs and only reads the backlog afterwards.
async function measure(name, count, { bufferBytes = rcvbuf, senderExtra = [], readerExtra = [], stopped = false } = {}) {
  const reader = readers[name]([...common, '--count', String(count), '--rcvbuf', String(bufferBytes), ...readerExtra]);
  try {
    await withTimeout(reader.ready, READER_EXIT_TIMEOUT_MS, `${name} reader start`);
    if (stopped) reader.signal('SIGSTOP');
    const sender = await runToCompletion(tools.sender, [...common, '--count', String(count), ...senderExtra]);
    if (stopped) reader.signal('SIGCONT');
    const result = await withTimeout(reader.result, READER_EXIT_TIMEOUT_MS, `${name} reader`);
    const dropped = result.kernelDrops + (result.queueDrops ?? 0);
    return {
      ...result,
      sender,
      dropped,
      unaccounted: sender.sent - result.received - dropped,
      rate: result.seconds > 0 ? result.received / result.seconds : 0,
      cpuNsPerMessage: result.received > 0 ? (result.cpuSeconds * 1e9) / result.received : 0,
    };
  } catch (error) {
    reader.kill();
    throw error;
  }
}

const fmt = (n) => Math.round(n).toLocaleString('en-US');
const us = (ns) => `${(ns / 1000).toFixed(ns < 10_000 ? 2 : 1)} us`;

function describeRun(label, run) {
  const extra = run.foreign || run.malformed ? ` foreign ${run.foreign} malformed ${run.malformed ?? 0}` : '';
  return (
    `${label}: ${fmt(run.rate).padStart(9)} msg/s  received ${run.received} dropped ${run.dropped} ` +
    `(kernel ${run.kernelDrops}, queue ${run.queueDrops ?? 0}) unaccounted ${run.unaccounted}${extra}  ` +
    `cpu ${us(run.cpuNsPerMessage)}/msg  [sender ${fmt(run.sender.rate)} msg/s]`
  );
}

const alone = await runToCompletion(tools.sender, [...common, '--count', String(messages)]);
console.log(
  `ovn-psample receive benchmark: ${messages} messages of ${alone.messageBytes} bytes per run, ` +
    `${repetitions} repetitions, usersock group ${group}, family 0x${family.toString(16)}, ` +
    `receive buffer ${rcvbuf} bytes requested, niceness ${BENCH_NICENESS}`,
);
console.log(`sender alone, no reader joined: ${fmt(alone.rate)} msg/s`);

async function alternate(label, count, measureOptions) {
  const runs = { ref: [], ours: [] };
  for (let i = 0; i < repetitions; i++) {
    const order = i % 2 === 0 ? ['ref', 'ours'] : ['ours', 'ref'];
    for (const name of order) {
      const run = await measure(name, count, measureOptions);
      runs[name].push(run);
      console.log(describeRun(`${label} ${i + 1} ${name.padEnd(4)}`, run));
    }
  }
  const rates = (name) => median(runs[name].map((r) => r.rate));
  const cpu = (name) => median(runs[name].map((r) => r.cpuNsPerMessage));
  return { runs, ref: rates('ref'), ours: rates('ours'), refCpu: cpu('ref'), oursCpu: cpu('ours') };
}

function describeMedians(what, { ref, ours, refCpu, oursCpu }) {
  return (
    `${what}, median of ${repetitions}: ref ${fmt(ref)} msg/s, ours ${fmt(ours)} msg/s, ratio ` +
    `${(ours / ref).toFixed(3)}; CPU per message (all threads) ref ${us(refCpu)}, ours ${us(oursCpu)}`
  );
}

const live = await alternate('live ', messages);
console.log(describeMedians('live load', live));
const drain = await alternate('drain', drainMessages, { bufferBytes: drainRcvbuf, stopped: true });
console.log(describeMedians(`backlog drain (reader stopped while ${drainMessages} messages queue)`, drain));

const { clockOffsetNs } = await runToCompletion(tools.sender, ['--clock-offset']);
const latencyCount = latencyRate * latencySeconds;
const paced = ['--rate', String(latencyRate)];
const pacedRuns = { ref: [], ours: [] };
for (let i = 0; i < latencyRepetitions; i++) {
  for (const name of i % 2 === 0 ? ['ref', 'ours'] : ['ours', 'ref']) {
    const readerExtra = name === 'ref' ? ['--latency'] : ['--clock-offset', clockOffsetNs];
    const run = await measure(name, latencyCount, { senderExtra: paced, readerExtra });
    pacedRuns[name].push(run);
    const l = run.latencyNs;
    console.log(
      run.received === 0
        ? `paced ${i + 1} ${name}: no message arrived, so there is nothing to measure`
        : `paced ${i + 1} ${name.padEnd(4)} at ${latencyRate} msg/s (${run.received}/${latencyCount} received, send -> ` +
            `${name === 'ours' ? 'JS callback' : 'recv'}): p50 ${us(l.p50)}  p99 ${us(l.p99)}  ` +
            `p99.9 ${us(l.p999)}  max ${us(l.max)}; cpu ${us(run.cpuNsPerMessage)}/msg ` +
            `(${((100 * run.cpuSeconds) / run.seconds).toFixed(1)}% of one core)`,
    );
  }
}
const pacedMedian = (name, value) => median(pacedRuns[name].filter((r) => r.received > 0).map(value));
const pacedCpu = { ref: pacedMedian('ref', (r) => r.cpuNsPerMessage), ours: pacedMedian('ours', (r) => r.cpuNsPerMessage) };
const oursP99 = pacedMedian('ours', (r) => r.latencyNs.p99);
const cpuRatioPaced = pacedCpu.ours / pacedCpu.ref;
console.log(
  `paced at ${latencyRate} msg/s, median of ${latencyRepetitions}: CPU per message (all threads) ours ${us(pacedCpu.ours)}, ` +
    `ref ${us(pacedCpu.ref)}, ratio ${cpuRatioPaced.toFixed(2)}; ours p99 send -> JS callback ${us(oursP99)}`,
);

const idleArgs = [...common, '--rcvbuf', String(rcvbuf), '--seconds', String(idleSeconds)];
const idleScript = join(benchDir, 'lib', 'idle-cpu.mjs');
const [idle, bare] = await Promise.all([
  runToCompletion(process.execPath, [idleScript, ...idleArgs]),
  runToCompletion(process.execPath, [idleScript, ...idleArgs, '--baseline']),
]);
console.log(
  `idle CPU over ${idleSeconds} s, socket open, no traffic: ours ${idle.cpuPercent.toFixed(3)}% of one core ` +
    `(${idle.contextSwitchesPerSecond.toFixed(1)} context switches/s); the same node process without a ` +
    `socket ${bare.cpuPercent.toFixed(3)}% (${bare.contextSwitchesPerSecond.toFixed(1)}/s)`,
);

const oursRuns = [...live.runs.ours, ...drain.runs.ours];
const total = (key) => oursRuns.reduce((sum, run) => sum + run[key], 0);
const sent = oursRuns.reduce((sum, run) => sum + run.sender.sent, 0);
const unaccounted = oursRuns.reduce((sum, run) => sum + Math.abs(run.unaccounted), 0);
console.log(
  `RESULT ratio=${(live.ours / live.ref).toFixed(3)} ours=${Math.round(live.ours)} ref=${Math.round(live.ref)} ` +
    `sent=${sent} received=${total('received')} dropped=${total('dropped')} unaccounted=${unaccounted} ` +
    `cpu_ratio_paced=${cpuRatioPaced.toFixed(2)} p99_ms=${(oursP99 / 1e6).toFixed(2)}`,
);
process.exitCode = unaccounted === 0 ? 0 : 1;
