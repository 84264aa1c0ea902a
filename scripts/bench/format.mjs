// node scripts/bench/format.mjs [--format json|text] [--dist DIR] [--rounds R]   (after npm run build)
//
// What does `listen --format json` (or text) cost per sample on the main thread to turn a batch into its
// output? Batches of the real captures in test/fixtures/psample (OVN samples, each packet
// sampled three times in a row as OVN does for established traffic), each with an event shaped
// like the decoder's (frozen, one per cookie, ~1 KB of JSON with a non-ASCII name), are
// formatted line by line (formatSample(): one native call a sample, the strings joined and UTF-8
// encoded as the write does; how `decode` goes) and as a batch (SampleLines: one native call
// for the whole batch, native/render/sample_lines.cc, the events from its table; what `listen` does), in alternating rounds because other work shares the machine, each after a full
// garbage collection; medians are compared. Both must produce the same bytes. (On the same host,
// before the TypeScript line builders went: a string a batch 3731 ns, SampleJsonWriter 2867 ns,
// SampleJsonLines 748 ns a sample.)
// The last line is the verdict:
//   RESULT ratio=<batch/line ns> line_ns=<ns per sample> batch_ns=<ns per sample>
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { median } from './lib/percentiles.mjs';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values: options } = parseArgs({
  options: {
    dist: { type: 'string', default: join(projectRoot, 'dist') },
    rounds: { type: 'string', default: '21' },
    format: { type: 'string', default: 'json' },
  },
});
const format = options.format;
if (format !== 'json' && format !== 'text') throw new Error(`--format ${format}: use json or text`);
const rounds = Number(options.rounds);
const load = (path) => import(pathToFileURL(join(options.dist, path)).href);
const { addon, NATIVE_LITTLE_ENDIAN } = await load('native/binding.js');
const { PsampleBatch } = await load('psample/batch.js');
const { statValues } = await load('psample/stats.js');
// formatSample moved from cli/format.js to output/sample-lines.js; --dist may name a build from before.
const sampleLines = await load('output/sample-lines.js');
const { SampleLines } = sampleLines;
const { formatSample } = sampleLines.formatSample === undefined ? await load('cli/format.js') : sampleLines;
const { readCookieId } = await load('ovn/cookie.js');

const BATCH_SAMPLES = 64;
const BATCHES = 500;
const fixture = (name) => Buffer.from(readFileSync(join(projectRoot, 'test', 'fixtures', 'psample', `${name}.hex`), 'utf8').trim(), 'hex');
const captures = [fixture('ovs-1'), fixture('ovs-2')];
const messages = [];
for (let i = 0; messages.length < BATCH_SAMPLES; i++) messages.push(...Array(3).fill(captures[i % captures.length]));
const [buffer, count] = addon.decode(Buffer.concat(messages.slice(0, BATCH_SAMPLES)), 0, statValues());
const nativeBatch = new PsampleBatch(buffer, count, NATIVE_LITTLE_ENDIAN);
const batch = [...nativeBatch];
if (batch.length !== BATCH_SAMPLES) throw new Error(`decoded ${batch.length} of ${BATCH_SAMPLES} samples`);

// One event per cookie, as the decoder's memo hands out (the fixtures' cookies share their domain).
const events = new Map();
function describe(sample) {
  const obsDomainId = readCookieId(sample.userCookie, 0);
  const obsPointId = readCookieId(sample.userCookie, 4);
  let event = events.get(obsPointId);
  if (event === undefined) {
    const policy = `shop:allow-frontend-to-backend-${events.size}`;
    event = Object.freeze({
      status: 'decoded',
      obsDomainId,
      obsPointId,
      appId: obsDomainId >>> 24,
      app: 'acl-est',
      message: `Allowed by network policy allow-frontend-to-backend-${events.size}, direction Ingress (café)`,
      action: 'allow-related',
      owner: Object.freeze({
        kind: 'NetworkPolicy',
        namespace: 'shop',
        name: `allow-frontend-to-backend-${events.size}`,
        direction: 'Ingress',
        controller: 'default-network-controller',
      }),
      acl: Object.freeze({
        uuid: `0a5c6f2e-1d3b-4c8e-9f00-00000000000${events.size}`,
        name: `NP:${policy}:Ingress:0`,
        priority: 1001,
        direction: 'to-lport',
        match: 'ip4.src == {$a10395143915094282125, $a8839582348234981237} && outport == @a13757631665380011447',
        action: 'allow-related',
        tier: 2,
        label: 0,
      }),
      datapath: Object.freeze({ key: obsDomainId & 0xffffff, switch: 'ovn-worker', network: 'default' }),
    });
    events.set(obsPointId, event);
  }
  return event;
}

function viaLines() {
  let bytes = 0;
  for (let b = 0; b < BATCHES; b++) {
    let text = '';
    for (const sample of batch) text += `${formatSample(sample, format, describe(sample))}\n`;
    // What the write does with the string: encode it to UTF-8.
    bytes += Buffer.from(text).length;
  }
  return bytes;
}

// The decoder's memo holds every event until the databases change: so does the renderer's table.
const native = new SampleLines(format, { decodeSample: describe, holds: () => true, on() {}, off() {} });
function viaBatch() {
  let bytes = 0;
  for (let b = 0; b < BATCHES; b++) bytes += native.write(nativeBatch).bytes.length;
  return bytes;
}

let text = '';
for (const sample of batch) text += `${formatSample(sample, format, describe(sample))}\n`;
if (!native.write(nativeBatch).bytes.equals(Buffer.from(text))) throw new Error('the batch renderer wrote other bytes than the lines');
console.log(`${format}: ${BATCH_SAMPLES} samples a batch, ${(Buffer.byteLength(text) / BATCH_SAMPLES).toFixed(0)} bytes a line`);

// Each round starts with an empty young generation: the garbage of one way must not be
// collected in the other's time.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc');

function time(run) {
  collectGarbage();
  const started = process.hrtime.bigint();
  const bytes = run();
  if (bytes === 0) throw new Error('nothing written');
  return Number(process.hrtime.bigint() - started) / (BATCHES * BATCH_SAMPLES);
}
const lineNs = [];
const batchNs = [];
for (let round = 0; round < rounds; round++) {
  lineNs.push(time(viaLines));
  batchNs.push(time(viaBatch));
  console.log(`round ${round + 1}: line by line ${lineNs.at(-1).toFixed(0)} ns | batch ${batchNs.at(-1).toFixed(0)} ns a sample`);
}
const [l, b] = [median(lineNs), median(batchNs)];
console.log(`median: line by line ${l.toFixed(0)} ns, batch ${b.toFixed(0)} ns a sample (goal ratio < 1)`);
console.log(`RESULT ratio=${(b / l).toFixed(2)} line_ns=${l.toFixed(0)} batch_ns=${b.toFixed(0)}`);
