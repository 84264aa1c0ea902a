// node scripts/bench/watch-path.mjs [--packets N] [--rounds R] [--before DIR]   (after npm run build)
//
// What `watch` costs per sample in JavaScript, against what `listen --format json` costs on the
// same batches in the same process: OVN-shaped traffic (each packet sampled 3 times with one
// cookie, as OVN 25.03 samples an established packet; UDP between two pods), made into batches by
// the addon's own parser, then
//   listen   SampleLines('json').write(batch): the native line renderer, the reference;
//   json     NetworkEventAssembler.pushBatch + JsonFormatter.write into a LineBuffer;
//   human    the same with HumanFormatter;
//   aggregate  watch --aggregate packet by packet (IPFIX, --count): pushBatch + FlowAggregator.add, the interval's records written once at the end;
//   aggregate-native  watch --aggregate from psample: NativeFlows.add + drain per batch + FlowAggregator.addCounts, the same records;
//   json-native  watch --format json from psample: NativeEventLines.add + release per batch, the same lines as json;
//   human-native  watch's human format from psample: the same, format human, the same lines as human.
// No socket, decoder or pods (the lab benchmark, npm run bench:lab, measures those with the
// kernel's samples): this is the hand-off from batches to bytes, where watch's own CPU goes.
// With --before DIR (another built checkout), its watch path is measured in the same rounds:
// assembler.push per sample and format() into strings, as that build's watch did.
// Rounds alternate the consumers; the medians are compared. Last line:
//   RESULT json_ratio=<json/listen> human_ratio=<human/listen> aggregate_ratio=<aggregate/listen> [aggregate_native_ratio=…] [json_native_ratio=…] [human_native_ratio=…] [before_json_ratio=… before_human_ratio=…]
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { median } from './lib/percentiles.mjs';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values: options } = parseArgs({
  options: {
    packets: { type: 'string', default: '40000' },
    rounds: { type: 'string', default: '5' },
    before: { type: 'string' },
  },
});
const packets = Number(options.packets);
const rounds = Number(options.rounds);

function load(root) {
  const require = createRequire(join(root, 'package.json'));
  const dist = (path) => require(join(root, 'dist', path));
  return {
    index: dist('index.js'),
    binding: dist('native/binding.js'),
    batch: dist('psample/batch.js'),
    stats: dist('psample/stats.js'),
    lines: dist('output/sample-lines.js'),
    json: dist('output/event-json.js'),
    human: dist('output/event-human.js'),
    lineBuffer: (() => {
      try {
        return dist('output/line-buffer.js');
      } catch {
        return undefined;
      }
    })(),
    assembler: dist('events/event-assembler.js'),
    flows: (() => {
      try {
        return { aggregator: dist('events/flow-aggregator.js'), json: dist('output/flow-json.js') };
      } catch {
        return undefined;
      }
    })(),
    nativeFlows: (() => {
      try {
        return dist('events/native-flows.js');
      } catch {
        return undefined;
      }
    })(),
    // NativeEventLines (json and human), or an older build's NativeJsonLines (json only).
    nativeLines: (() => {
      try {
        return { NativeLines: dist('output/native-event-lines.js').NativeEventLines, human: true };
      } catch {
        try {
          return { NativeLines: dist('output/native-json-lines.js').NativeJsonLines, human: false };
        } catch {
          return undefined;
        }
      }
    })(),
  };
}

// A UDP datagram between two pods (Ethernet, IPv4, 64 bytes of payload), its source port the packet's number.
function frame(n) {
  const bytes = new Uint8Array(14 + 20 + 8 + 64);
  bytes.set([0x0a, 0x58, 0x0a, 0xf4, 0, 4, 0x0a, 0x58, 0x0a, 0xf4, 0, 3, 0x08, 0x00]);
  bytes.set([0x45, 0, 0, 92, 0x12, 0x34, 0x40, 0, 64, 17, 0, 0, 10, 244, 0, 3, 10, 244, 0, 4], 14);
  bytes.set([(1024 + (n % 60000)) >> 8, (1024 + (n % 60000)) & 0xff, 0x13, 0x89, 0, 72, 0, 0], 34);
  return bytes;
}

/** The traffic as batches of about 64 KiB, each packet's 3 samples back to back. */
function batchesOf(build) {
  const { encodePsample } = build.index;
  const cookie = Uint8Array.from([0x03, 0, 0, 3, 0, 0, 0x03, 0xf4]);
  const batches = [];
  let pending = [];
  let bytes = 0;
  const flush = () => {
    const [buffer, count] = build.binding.addon.decode(Buffer.concat(pending), 0, build.stats.statValues());
    batches.push(new build.batch.PsampleBatch(buffer, count, build.binding.NATIVE_LITTLE_ENDIAN));
    pending = [];
    bytes = 0;
  };
  const t0 = 1_750_000_000_000_000_000n;
  for (let n = 0; n < packets; n++) {
    const data = frame(n);
    for (let s = 0; s < 3; s++) {
      const message = encodePsample({
        group: 42,
        iifindex: 5,
        proto: 0x800,
        origSize: data.length,
        timestampNs: t0 + BigInt(n * 100_000 + s),
        data,
        userCookie: cookie,
      });
      pending.push(message);
      bytes += message.length;
      if (bytes > 60_000) flush();
    }
  }
  if (pending.length > 0) flush();
  return batches;
}

const cpuUs = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

/** CPU per sample of one pass over the batches; `run` returns the bytes it made. */
function measure(batches, run) {
  const samples = batches.reduce((sum, b) => sum + b.length, 0);
  const start = cpuUs();
  const bytes = run(batches);
  const spent = cpuUs() - start;
  if (bytes === 0) throw new Error('a consumer wrote nothing');
  return spent / samples;
}

function consumers(build, label) {
  const batches = batchesOf(build);
  const interfaceName = () => 'eth0';
  const listen = (list) => {
    const lines = new build.lines.SampleLines('json');
    let bytes = 0;
    for (const batch of list) {
      bytes += lines.write(batch).bytes.length;
      lines.recycle();
    }
    return bytes;
  };
  const watch = (makeFormatter) => (list) => {
    const formatter = makeFormatter();
    const { NetworkEventAssembler } = build.assembler;
    const assembler = new NetworkEventAssembler({ groupWindowMs: 50 });
    let bytes = 0;
    if (build.lineBuffer !== undefined && typeof assembler.pushBatch === 'function') {
      const out = new build.lineBuffer.LineBuffer();
      assembler.on('event', (event) => formatter.write(event, out));
      for (const batch of list) {
        assembler.pushBatch(batch);
        assembler.flush();
        bytes += out.take().length;
        out.recycle();
      }
    } else {
      // The starting point's watch: a sample at a time, each line a string, made bytes by the output.
      let text = [];
      assembler.on('event', (event) => text.push(formatter.format(event)));
      for (const batch of list) {
        for (const sample of batch) assembler.push(sample);
        assembler.flush();
        bytes += Buffer.from(text.join('')).length;
        text = [];
      }
    }
    assembler.close();
    return bytes;
  };
  const aggregate = (list) => {
    const { NetworkEventAssembler } = build.assembler;
    const assembler = new NetworkEventAssembler({ groupWindowMs: 50 });
    const flows = new build.flows.aggregator.FlowAggregator(0);
    assembler.on('event', (event) => flows.add(event));
    for (const batch of list) {
      assembler.pushBatch(batch);
      assembler.flush();
    }
    assembler.close();
    const out = new build.lineBuffer.LineBuffer();
    new build.flows.json.FlowJsonFormatter().write(flows.take(1), out);
    return out.take().length;
  };
  const aggregateNative = (list) => {
    const { NetworkEventAssembler } = build.assembler;
    const flows = new build.flows.aggregator.FlowAggregator(0);
    const table = new build.nativeFlows.NativeFlows({
      assembler: new NetworkEventAssembler({ groupWindowMs: 50 }),
      groupWindowMs: 50,
      maxFlows: 40_000,
      bySourcePort: false,
      due: () => undefined,
    });
    const visit = (flow, c) => flows.addCounts(flow, c.samples, c.packets, c.firstMs, c.lastMs, c.sampledPackets);
    // As the per-packet case flushes its grouping after each batch.
    for (const batch of list) {
      table.add(batch);
      table.drain(true, false, visit);
    }
    table.drain(true, true, visit);
    table.close();
    const out = new build.lineBuffer.LineBuffer();
    new build.flows.json.FlowJsonFormatter().write(flows.take(1), out);
    return out.take().length;
  };
  const linesNative = (format) => (list) => {
    const { NetworkEventAssembler } = build.assembler;
    let bytes = 0;
    const lines = new build.nativeLines.NativeLines({
      assembler: new NetworkEventAssembler({ groupWindowMs: 50 }),
      groupWindowMs: 50,
      format,
      bySourcePort: false,
      interfaceName,
      accept: () => true,
      limit: Infinity,
      counts: { packets: 0, shown: 0, filtered: 0 },
      write: (written) => {
        bytes += written.length;
        return true;
      },
      due: () => undefined,
    });
    // As the per-packet case flushes its grouping after each batch.
    for (const batch of list) {
      lines.add(batch);
      lines.release(true);
    }
    lines.close();
    return bytes;
  };
  return {
    batches,
    runs: {
      [`${label}listen`]: listen,
      [`${label}json`]: watch(() => new build.json.JsonFormatter(interfaceName)),
      [`${label}human`]: watch(() => new build.human.HumanFormatter(false, interfaceName)),
      ...(build.flows === undefined ? {} : { [`${label}aggregate`]: aggregate }),
      ...(build.nativeFlows === undefined ? {} : { [`${label}aggregate-native`]: aggregateNative }),
      ...(build.nativeLines === undefined ? {} : { [`${label}json-native`]: linesNative({ kind: 'json' }) }),
      ...(build.nativeLines?.human === true ? { [`${label}human-native`]: linesNative({ kind: 'human', color: false }) } : {}),
    },
  };
}

const builds = [consumers(load(projectRoot), '')];
if (options.before !== undefined) builds.push(consumers(load(options.before), 'before:'));
const figures = {};
for (let round = 0; round < rounds; round++) {
  for (const { batches, runs } of builds) {
    for (const [name, run] of Object.entries(runs)) (figures[name] ??= []).push(measure(batches, run));
  }
}
const perSample = Object.fromEntries(Object.entries(figures).map(([name, values]) => [name, median(values)]));
console.log(`${packets} packets, 3 samples each, ${rounds} rounds; CPU per sample (median, us):`);
for (const [name, value] of Object.entries(perSample)) console.log(`  ${name.padEnd(14)} ${value.toFixed(2)}`);
const ratio = (name, reference) => (perSample[name] / perSample[reference]).toFixed(2);
const result = [
  `json_ratio=${ratio('json', 'listen')}`,
  `human_ratio=${ratio('human', 'listen')}`,
  `aggregate_ratio=${ratio('aggregate', 'listen')}`,
];
if (perSample['aggregate-native'] !== undefined) result.push(`aggregate_native_ratio=${ratio('aggregate-native', 'listen')}`);
if (perSample['json-native'] !== undefined) result.push(`json_native_ratio=${ratio('json-native', 'listen')}`);
if (perSample['human-native'] !== undefined) result.push(`human_native_ratio=${ratio('human-native', 'listen')}`);
if (options.before !== undefined) {
  result.push(`before_json_ratio=${ratio('before:json', 'listen')}`, `before_human_ratio=${ratio('before:human', 'listen')}`);
}
console.log(`RESULT ${result.join(' ')}`);
