// node scripts/bench/format.mjs [--dist DIR] [--rounds R]   (after npm run build)
//
// What does `listen --format json` cost per sample on the main thread to turn a batch into its
// output? Batches of the real captures in test/fixtures/psample (OVN samples, each packet
// sampled three times in a row as OVN does for established traffic), each with an event shaped
// like the decoder's (frozen, one per cookie, ~1 KB of JSON with a non-ASCII name), are
// formatted the way listen did before (one string per batch, then UTF-8 encoded as the write
// does), with SampleJsonWriter (one Buffer per batch, the line built in JavaScript) and with
// SampleJsonLines (the whole batch rendered natively, native/sample_json.cc, the events from its
// table), in alternating rounds because other work shares the machine, each after a full garbage
// collection; medians are compared. All must produce the same bytes.
// The last line is the verdict:
//   RESULT ratio=<native/writer ns> string_ns=<ns per sample> writer_ns=<ns per sample> native_ns=<ns per sample>
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
  },
});
const rounds = Number(options.rounds);
const load = (path) => import(pathToFileURL(join(options.dist, path)).href);
const { addon, NATIVE_LITTLE_ENDIAN } = await load('native/binding.js');
const { PsampleBatch } = await load('psample/batch.js');
const { statValues } = await load('psample/stats.js');
const { formatSample } = await load('cli/format.js');
const { SampleJsonWriter } = await load('output/sample-json-writer.js');
const { SampleJsonLines } = await load('output/sample-json-lines.js');
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
      owner: Object.freeze({ kind: 'NetworkPolicy', namespace: 'shop', name: `allow-frontend-to-backend-${events.size}`, direction: 'Ingress', controller: 'default-network-controller' }),
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

function viaString() {
  let bytes = 0;
  for (let b = 0; b < BATCHES; b++) {
    let text = '';
    for (const sample of batch) text += `${formatSample(sample, 'json', describe(sample))}\n`;
    // What the write does with the string: encode it to UTF-8.
    bytes += Buffer.from(text).length;
  }
  return bytes;
}

const writer = new SampleJsonWriter();
function viaWriter() {
  let bytes = 0;
  for (let b = 0; b < BATCHES; b++) {
    for (const sample of batch) writer.append(sample, describe(sample));
    bytes += writer.take().length;
  }
  return bytes;
}

// The decoder's memo holds every event until the databases change: so does the renderer's table.
const native = new SampleJsonLines({ decodeSample: describe, holds: () => true, on() {}, off() {} });
function viaNative() {
  let bytes = 0;
  for (let b = 0; b < BATCHES; b++) bytes += native.write(nativeBatch).bytes.length;
  return bytes;
}

let text = '';
for (const sample of batch) text += `${formatSample(sample, 'json', describe(sample))}\n`;
for (const sample of batch) writer.append(sample, describe(sample));
if (!writer.take().equals(Buffer.from(text))) throw new Error('the writer wrote other bytes than the strings');
if (!native.write(nativeBatch).bytes.equals(Buffer.from(text))) throw new Error('the native renderer wrote other bytes than the strings');
console.log(`${BATCH_SAMPLES} samples a batch, ${(Buffer.byteLength(text) / BATCH_SAMPLES).toFixed(0)} bytes a line`);

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
const stringNs = [];
const writerNs = [];
const nativeNs = [];
for (let round = 0; round < rounds; round++) {
  stringNs.push(time(viaString));
  writerNs.push(time(viaWriter));
  nativeNs.push(time(viaNative));
  console.log(
    `round ${round + 1}: string ${stringNs.at(-1).toFixed(0)} ns | writer ${writerNs.at(-1).toFixed(0)} ns | native ${nativeNs.at(-1).toFixed(0)} ns a sample`,
  );
}
const [s, w, n] = [median(stringNs), median(writerNs), median(nativeNs)];
console.log(`median: string ${s.toFixed(0)} ns, writer ${w.toFixed(0)} ns, native ${n.toFixed(0)} ns a sample (goal ratio < 1)`);
console.log(`RESULT ratio=${(n / w).toFixed(2)} string_ns=${s.toFixed(0)} writer_ns=${w.toFixed(0)} native_ns=${n.toFixed(0)}`);
