// npm run bench:receive [-- --messages N --repetitions R ...]   (after npm run build; as root)
//
// How fast ovn-psample turns psample multicast into PsampleMessage objects in a JS callback,
// compared with ref-reader.c, a bare C recv loop that only counts: the most any userspace reader
// gets here. sender.c multicasts the same N realistic messages on NETLINK_USERSOCK for both
// readers; each reader joins before the sender starts and has the same receive buffer, and its
// rate is received / (last - first arrival). Runs alternate ref/ours and the medians are compared,
// because the sender and the reader share two cores with whatever else the machine is doing.
// Then: send-to-callback latency at a paced rate, and the CPU an idle open socket costs.
// The last line is the verdict:
//   RESULT ratio=<ours/ref> ours=<msgs/s> ref=<msgs/s> sent=<n> received=<n> dropped=<n> unaccounted=<n>
// where sent/received/dropped/unaccounted add up ovn-psample's runs.
import { existsSync } from 'node:fs';
import { setPriority } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runToCompletion, startChild } from './lib/child.mjs';
import { compileTools } from './lib/compile.mjs';
import { median } from './lib/percentiles.mjs';

const benchDir = dirname(fileURLToPath(import.meta.url));
const projectRoot = join(benchDir, '..', '..');
const READER_EXIT_TIMEOUT_MS = 60_000;

const { values: options } = parseArgs({
  options: {
    messages: { type: 'string', default: '500000' },
    repetitions: { type: 'string', default: '5' },
    group: { type: 'string', default: '29' },
    'rcvbuf-bytes': { type: 'string', default: String(32 * 1024 * 1024) },
    'latency-rate': { type: 'string', default: '10000' },
    'latency-seconds': { type: 'string', default: '10' },
    'idle-seconds': { type: 'string', default: '10' },
  },
});
const messages = Number(options.messages);
const repetitions = Number(options.repetitions);
const group = Number(options.group);
const rcvbuf = Number(options['rcvbuf-bytes']);
const latencyRate = Number(options['latency-rate']);
const latencySeconds = Number(options['latency-seconds']);
const idleSeconds = Number(options['idle-seconds']);
// A family id of its own: messages from anyone else on the same group count as foreign, not ours.
const family = 0x7000 + Math.floor(Math.random() * 0x1000);

if (!existsSync(join(projectRoot, 'dist', 'index.js'))) {
  console.error('dist/index.js is missing: run `npm run build` first, then `npm run bench:receive`.');
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
const readerArgs = (count) => [...common, '--count', String(count), '--rcvbuf', String(rcvbuf)];
const oursReader = join(benchDir, 'lib', 'ours-reader.mjs');

const readers = {
  ref: (count, extra = []) => startChild(tools['ref-reader'], [...readerArgs(count), ...extra]),
  ours: (count, extra = []) => startChild(process.execPath, [oursReader, ...readerArgs(count), ...extra]),
};

async function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function measure(name, count, senderExtra = [], readerExtra = []) {
  const reader = readers[name](count, readerExtra);
  try {
    await withTimeout(reader.ready, READER_EXIT_TIMEOUT_MS, `${name} reader start`);
    const sender = await runToCompletion(tools.sender, [...common, '--count', String(count), ...senderExtra]);
    const result = await withTimeout(reader.result, READER_EXIT_TIMEOUT_MS, `${name} reader`);
    const dropped = result.kernelDrops + (result.queueDrops ?? 0);
    return {
      ...result,
      sender,
      dropped,
      unaccounted: sender.sent - result.received - dropped,
      rate: result.seconds > 0 ? result.received / result.seconds : 0,
    };
  } catch (error) {
    reader.kill();
    throw error;
  }
}

const fmt = (n) => Math.round(n).toLocaleString('en-US');
const us = (ns) => `${(ns / 1000).toFixed(1)} us`;

function describeRun(label, run) {
  const extra = run.foreign || run.malformed ? ` foreign ${run.foreign} malformed ${run.malformed ?? 0}` : '';
  return (
    `${label}: ${fmt(run.rate).padStart(9)} msg/s  received ${run.received} dropped ${run.dropped} ` +
    `(kernel ${run.kernelDrops}, queue ${run.queueDrops ?? 0}) unaccounted ${run.unaccounted}${extra}  ` +
    `[sender ${fmt(run.sender.rate)} msg/s]`
  );
}

const alone = await runToCompletion(tools.sender, [...common, '--count', String(messages)]);
console.log(
  `ovn-psample receive benchmark: ${messages} messages of ${alone.messageBytes} bytes per run, ` +
    `${repetitions} repetitions, usersock group ${group}, family 0x${family.toString(16)}, ` +
    `receive buffer ${rcvbuf} bytes requested, niceness ${BENCH_NICENESS}`,
);
console.log(`sender alone, no reader joined: ${fmt(alone.rate)} msg/s`);

const runs = { ref: [], ours: [] };
for (let i = 0; i < repetitions; i++) {
  const order = i % 2 === 0 ? ['ref', 'ours'] : ['ours', 'ref'];
  for (const name of order) {
    const run = await measure(name, messages);
    runs[name].push(run);
    console.log(describeRun(`run ${i + 1} ${name.padEnd(4)}`, run));
  }
}
const refRate = median(runs.ref.map((r) => r.rate));
const oursRate = median(runs.ours.map((r) => r.rate));
console.log(`throughput, median of ${repetitions}: ref ${fmt(refRate)} msg/s, ours ${fmt(oursRate)} msg/s`);

const { clockOffsetNs } = await runToCompletion(tools.sender, ['--clock-offset']);
const latencyCount = latencyRate * latencySeconds;
const paced = ['--rate', String(latencyRate)];
const refLatency = await measure('ref', latencyCount, paced, ['--latency']);
const oursLatency = await measure('ours', latencyCount, paced, ['--clock-offset', clockOffsetNs]);
for (const [name, run] of [['ref ', refLatency], ['ours', oursLatency]]) {
  const l = run.latencyNs;
  console.log(
    `latency ${name} at ${latencyRate} msg/s (${run.received}/${latencyCount} received, send -> ` +
      `${name === 'ours' ? 'JS callback' : 'recv'}): p50 ${us(l.p50)}  p99 ${us(l.p99)}  ` +
      `p99.9 ${us(l.p999)}  max ${us(l.max)}`,
  );
}

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

const total = (key) => runs.ours.reduce((sum, run) => sum + run[key], 0);
const sent = runs.ours.reduce((sum, run) => sum + run.sender.sent, 0);
const unaccounted = runs.ours.reduce((sum, run) => sum + Math.abs(run.unaccounted), 0);
console.log(
  `RESULT ratio=${(oursRate / refRate).toFixed(3)} ours=${Math.round(oursRate)} ref=${Math.round(refRate)} ` +
    `sent=${sent} received=${total('received')} dropped=${total('dropped')} unaccounted=${unaccounted}`,
);
process.exitCode = unaccounted === 0 ? 0 : 1;
