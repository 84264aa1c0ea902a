// The lab benchmark, inside the lab guest (scripts/lab/guest/run.sh bench; the host side is
// `npm run bench:lab` = scripts/lab/lab.sh bench). Real tc act_sample samples and real OVN ACL
// samples, at each offered rate for a fixed time; every consumer reads the same load in turn, the
// C reference reader included, one at a time. Prints one line per run as it goes, then the table,
// the idle CPU and, as the last line:
//   RESULT cpu_ratio_2k=… cpu_ratio_10k=… loss_ours_unpaced=… loss_ref_unpaced=… drain_s=…
//          watch_ratio_10k=… watch_ratio_30k=… watch_loss_unpaced=… watch_drain_10k_s=… watch_drain_30k_s=…
//          agent_ratio_10k=… agent_ratio_30k=… agent_loss_unpaced=…
// The figures are also written to OUT/bench.json and the report to OUT/bench-report.txt.
//
//   node run.mjs [--seconds 5] [--rates 2000,10000,30000,unpaced] [--scenarios tc,ovn]
//                [--consumers NAME,...] [--drain-cap 30] [--idle-seconds 10] [--payload 64]
//                [--warmup-seconds 0] [--repeat 1] [--quick] [--tools /lab/tools] [--out /lab/out] [--node-args='--cpu-prof ...']
//                [--before /lab/before] [--perf]
// Rates are samples/s. --consumers applies to every scenario (default: consumers.mjs).
// --warmup-seconds: before each measured burst, a burst this long at the same rate (10,000/s for
// unpaced runs), printed and left out, for the steady state of a long-running consumer (V8's
// optimizing compiler has compiled the hot path); 0, the default, measures from a cold start.
// --node-args: node options for every ovn-psample consumer, split at spaces, e.g. to profile it
// in the guest: --node-args='--cpu-prof --cpu-prof-dir=/lab/out/profiles' (the files come back
// in .lab/out/profiles; a consumer then gets 60 s to write its profile after SIGTERM).
// --repeat: measure every consumer this many times at each rate, in rounds (each round runs every
// consumer once, the C reader first): a guest under TCG shares its host, whose load comes and goes
// within a run, so each ratio is against the C reader of the same round, and RESULT gives the
// median ratio and the worst loss and drain of the rounds.
// --before DIR: another built checkout (lab.sh bench --before=DIR puts it at /lab/before); consumer
// NAME@before is NAME run from it, to measure a change against what it changes in the same rounds.
// --perf: the host's perf (lab.sh bench --perf ships it to TOOLS/perf) samples each measured burst
// of every consumer, kernel and native code included, and writes OUT/profiles/SCENARIO-RATE-CONSUMER-roundN.txt
// (perf.mjs); node consumers get --perf-basic-prof so their JIT code has names.
// --quick measures only what RESULT needs: ovn at 2000/s, 10000/s, 30000/s and unpaced, c, json+ovn, watch and agent.
import { existsSync, writeFileSync } from 'node:fs';
import { cpus, release } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { AGENT_CONSUMER, DEFAULT_CONSUMERS, HEADLINE_CONSUMER, REFERENCE_CONSUMER, WATCH_CONSUMER, consumerNamed } from './consumers.mjs';
import { measureIdle } from './idle.mjs';
import { measureRun } from './measure.mjs';
import { guestPerf } from './perf.mjs';
import { addRatios, describeRun, leftLines, rateLabel, tableLines, threadLines, verdict } from './report.mjs';
import { ovnScenario, startOvnNode, tcScenario } from './scenarios.mjs';
import { BenchSetupError, run } from './shell.mjs';

// A failed step says what to do in its message; a stack trace would only bury that.
process.on('uncaughtException', (error) => {
  console.error(`lab benchmark: ${error.code ? `${error.code}: ` : ''}${error.message}`);
  process.exit(1);
});

const project = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

const { values: given } = parseArgs({
  options: {
    seconds: { type: 'string' },
    rates: { type: 'string' },
    scenarios: { type: 'string' },
    consumers: { type: 'string' },
    'drain-cap': { type: 'string' },
    'warmup-seconds': { type: 'string' },
    repeat: { type: 'string' },
    'idle-seconds': { type: 'string' },
    payload: { type: 'string' },
    quick: { type: 'boolean', default: false },
    tools: { type: 'string' },
    out: { type: 'string' },
    'node-args': { type: 'string' },
    before: { type: 'string' },
    perf: { type: 'boolean', default: false },
  },
});
const options = {
  seconds: '5',
  rates: '2000,10000,30000,unpaced',
  scenarios: given.quick ? 'ovn' : 'tc,ovn',
  consumers: given.quick ? `${REFERENCE_CONSUMER},${HEADLINE_CONSUMER},${WATCH_CONSUMER},${AGENT_CONSUMER}` : undefined,
  // Long enough for today's listen --nb --sb to drain a 5 s burst at 10,000/s on a busy host.
  'drain-cap': '30',
  'warmup-seconds': '0',
  repeat: '1',
  'idle-seconds': '10',
  payload: '64',
  tools: '/lab/tools',
  out: '/lab/out',
  ...Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined)),
};

function positive(name, text, { allowZero = false } = {}) {
  const value = Number(text);
  if (!Number.isInteger(value) || value < (allowZero ? 0 : 1))
    throw new BenchSetupError(`--${name} ${text}: give a whole number${allowZero ? '' : ' above 0'}`);
  return value;
}

const seconds = positive('seconds', options.seconds);
const drainCapSeconds = positive('drain-cap', options['drain-cap']);
const warmupSeconds = positive('warmup-seconds', options['warmup-seconds'], { allowZero: true });
const repeat = positive('repeat', options.repeat);
const idleSeconds = positive('idle-seconds', options['idle-seconds'], { allowZero: true });
const payloadBytes = positive('payload', options.payload);
const rates = options.rates.split(',').map((r) => (r === 'unpaced' ? 0 : positive('rates', r)));
const scenarioNames = options.scenarios.split(',');
for (const name of scenarioNames) {
  if (name !== 'tc' && name !== 'ovn') throw new BenchSetupError(`--scenarios ${name}: use tc and/or ovn`);
}
const consumersOf = Object.fromEntries(
  scenarioNames.map((name) => [name, (options.consumers?.split(',') ?? DEFAULT_CONSUMERS[name]).map(consumerNamed)]),
);
const consumers = [...new Set(Object.values(consumersOf).flat())];
if (options.before === undefined && consumers.some((c) => c.name.endsWith('@before'))) {
  throw new BenchSetupError('a consumer NAME@before needs another build: lab.sh bench --before=DIR');
}
for (const tool of ['psample-print', 'udp-flood']) {
  if (!existsSync(join(options.tools, tool))) {
    throw new BenchSetupError(
      `${join(options.tools, tool)} is missing: the host builds it (scripts/bench/lab/build-tools.sh); run the benchmark with 'npm run bench:lab'`,
    );
  }
}

// Checked before the 20-60 s of OVN start-up: a perf that cannot run here fails at once.
const perf = options.perf ? guestPerf({ tools: options.tools, out: options.out }) : undefined;

const say = (line) => console.log(line);
const t0 = performance.now();
const elapsed = () => `${((performance.now() - t0) / 1000).toFixed(0)} s`;

// Every consumer with --nb/--sb needs the OVN databases, tc scenario included.
say('== starting Open vSwitch and OVN, building the ovn-kubernetes-shaped node (20-60 s under TCG)');
const node = startOvnNode(project);
const nodeArgs = [...(options['node-args']?.split(' ').filter((a) => a !== '') ?? []), ...(perf?.nodeArgs ?? [])];
const ctx = { project, before: options.before, tools: options.tools, northbound: node.northbound, southbound: node.southbound, nodeArgs };
const scenarios = scenarioNames.map((name) =>
  name === 'tc' ? tcScenario({ tools: options.tools, payloadBytes }) : ovnScenario({ tools: options.tools, payloadBytes, node }),
);

const header = [
  `ovn-psample lab benchmark: kernel ${release()}, ${cpus().length} vCPUs, node ${process.version}; ` +
    `${seconds} s per burst${repeat > 1 ? `, ${repeat} rounds per rate` : ''}${warmupSeconds > 0 ? ` after a ${warmupSeconds} s warm-up burst` : ', consumers cold'}, drain cap ${drainCapSeconds} s after it, offered ${rates.map(rateLabel).join(', ')}`,
  ...scenarios.map((s) => `  ${s.describe}`),
  ...consumers.map((c) => `  ${c.name.padEnd(9)} ${c.title}`),
  ...(perf ? [`  perf: ${perf.describe}`] : []),
  '  CPU: all threads, from /proc, burst start to the last sample printed; loss: (generated - received) / generated, ' +
    "where left = not printed by the end (lost inside the consumer or still queued at the cap); xC: CPU per sample / the C reader's",
];
header.forEach((line) => say(line));

const runs = [];
const notes = [];
for (const scenario of scenarios) {
  say(`== ${scenario.name}: setting up (${elapsed()})`);
  await scenario.setup();
  notes.push(
    `${scenario.name}: ${scenario.samplesPerPacket} sample(s) per packet, so packets are paced at the offered samples/s / ${scenario.samplesPerPacket}`,
  );
  say(notes.at(-1));
  for (const rate of rates) {
    for (let round = 1; round <= repeat; round++)
      for (const consumer of consumersOf[scenario.name]) {
        const base = { scenario: scenario.name, rate, round, consumer: consumer.name };
        const output = `/tmp/bench-${scenario.name}-${consumer.name.replace(/\W/g, '_')}.out`;
        const profile = perf?.forRun(`${scenario.name}-${rateLabel(rate).replace('/s', '')}-${consumer.name}-round${round}`);
        let measured;
        try {
          measured = {
            ...base,
            ...(await measureRun({
              consumer,
              ctx: { ...ctx, group: scenario.group },
              scenario,
              rate,
              seconds,
              warmupSeconds,
              drainCapSeconds,
              output,
              profile,
            })),
          };
        } catch (error) {
          if (error instanceof BenchSetupError) throw error;
          measured = { ...base, error: error.message };
        }
        runs.push(measured);
        say(`${describeRun(measured)}   (${elapsed()})`);
      }
  }
}
addRatios(runs);

let idle = [];
if (idleSeconds > 0) {
  say(`== idle CPU over ${idleSeconds} s, no traffic (${elapsed()})`);
  idle = await measureIdle({ ...ctx, group: node.psampleGroup }, idleSeconds);
}
const { result, notes: verdictNotes, line } = verdict(runs);
const report = [
  ...header,
  ...notes,
  ...tableLines(runs),
  ...threadLines(runs),
  ...leftLines(runs),
  ...(idle.length
    ? [`idle CPU over ${idleSeconds} s: ${idle.map((p) => `${p.name} ${p.cpuPercent?.toFixed(2) ?? 'n/a'} %`).join(', ')} (of one vCPU)`]
    : []),
  ...verdictNotes,
  line,
];
// What made the OVN samples, for whoever wonders why one packet is several samples.
writeFileSync(join(options.out, 'datapath-flows.txt'), run('ovs-dpctl', ['dump-flows', '-m']));
writeFileSync(
  join(options.out, 'bench.json'),
  `${JSON.stringify({ kernel: release(), node: process.version, seconds, warmupSeconds, drainCapSeconds, payloadBytes, runs, idle, result }, null, 1)}\n`,
);
writeFileSync(join(options.out, 'bench-report.txt'), `${report.join('\n')}\n`);
say(`== done in ${elapsed()}`);
report.slice(header.length + notes.length).forEach((l) => say(l));
const failed = runs.filter((r) => r.error);
if (failed.length > 0) {
  console.error(`${failed.length} run(s) failed: ${failed.map((r) => `${r.scenario} ${rateLabel(r.rate)} ${r.consumer}`).join(', ')}`);
  process.exitCode = 1;
}
