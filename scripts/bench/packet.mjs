// node scripts/bench/packet.mjs [--iterations N] [--rounds R] [--dist DIR]   (after npm run build)
//
// What decodePacket costs per sample, compared with a bare loop that reads the same header bytes
// through a DataView and builds nothing: the floor for touching those bytes from JavaScript; and
// what the packet's JSON costs the JSON outputs (the native decoder's text, addon.packetJson).
// The frames are the real psample captures (ARP, ICMP) plus an IPv4 TCP SYN and an IPv6 UDP
// datagram, the traffic OVN ACL samples mostly carry. Rounds alternate the cases and medians are
// compared, since other work shares the machine.
// --dist DIR measures an older build's dist/ in the same rounds: its decodePacket, and its JSON
// the way it wrote it (before the decoder was native: packetJson(decodePacket(data, proto))).
// The last line is the verdict (the *_before figures and ratios with --dist only):
//   RESULT ratio=<decode/ref> decode_ns=<ns/packet> ref_ns=<ns/packet> describe_ns=<ns/packet> json_ns=<ns/packet>
//          decode_before_ns=… json_before_ns=… decode_ratio=<decode/decode_before> json_ratio=<json_before/json>
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { median } from './lib/percentiles.mjs';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { decodePacket, describePacket } = await import(join(projectRoot, 'dist', 'packet', 'index.js'));
const { addon } = await import(join(projectRoot, 'dist', 'native', 'binding.js'));
const packetJsonText = (data, proto) => addon.packetJson(data, proto);

const { values: options } = parseArgs({
  options: {
    iterations: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '7' },
    dist: { type: 'string' },
  },
});

/** The older build's decodePacket and packet JSON, whichever form it has: the addon's, or its packet-json module's. */
async function olderBuild(dist) {
  const packet = await import(join(dist, 'packet', 'index.js'));
  if (existsSync(join(dist, 'output', 'packet-json.js'))) {
    const output = await import(join(dist, 'output', 'packet-json.js'));
    const json = output.packetJsonText ?? ((data, proto) => output.packetJson(packet.decodePacket(data, proto)));
    return { decodePacket: packet.decodePacket, json };
  }
  const { addon: olderAddon } = await import(join(dist, 'native', 'binding.js'));
  return { decodePacket: packet.decodePacket, json: (data, proto) => olderAddon.packetJson(data, proto) };
}
const before = options.dist === undefined ? undefined : await olderBuild(options.dist);
const iterations = Number(options.iterations);
const rounds = Number(options.rounds);

const PSAMPLE_ATTR_DATA = 6;
const PSAMPLE_ATTR_PROTO = 14;

function capturedSample(file) {
  const message = Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
  const sample = {};
  for (let offset = 20; offset + 4 <= message.length;) {
    const length = message.readUInt16LE(offset);
    const type = message.readUInt16LE(offset + 2) & 0x3fff;
    if (length < 4) break;
    if (type === PSAMPLE_ATTR_DATA) sample.data = Uint8Array.from(message.subarray(offset + 4, offset + length));
    if (type === PSAMPLE_ATTR_PROTO) sample.proto = message.readUInt16LE(offset + 4);
    offset += (length + 3) & ~3;
  }
  return sample;
}

const fixtures = join(projectRoot, 'test', 'fixtures', 'psample');
const samples = readdirSync(fixtures)
  .filter((name) => name.endsWith('.hex'))
  .map((name) => capturedSample(join(fixtures, name)));
samples.push(
  {
    proto: 0x0800,
    data: Buffer.from(
      '0a580af4000c0a580af400050800' +
        '4500002c1c46400040060000' +
        '0af400050a60000a' +
        '87070050' +
        '12345678' +
        '00000000' +
        '6002faf0' +
        '00000000' +
        '020405b4',
      'hex',
    ),
  },
  {
    proto: 0x86dd,
    data: Buffer.from(
      '0a580af4000c0a580af4000586dd6000000000101140' +
        'fd000010024400000000000000000005fd00001000960000000000000000000a' +
        'ca6c0035001000001011121314151617',
      'hex',
    ),
  },
);

/** Reads what the decoder reads (MACs, ethertype, IP and transport header fields) and nothing more. */
function referenceRead(data) {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += view.getUint8(i);
  const etherType = view.getUint16(12);
  if (etherType === 0x0800) {
    sum += view.getUint8(14) + view.getUint16(16) + view.getUint16(18) + view.getUint16(20) + view.getUint8(22) + view.getUint8(23);
    sum += view.getUint32(26) + view.getUint32(30) + view.getUint32(34);
  } else if (etherType === 0x86dd) {
    sum += view.getUint32(14) + view.getUint16(18) + view.getUint8(20) + view.getUint8(21);
    for (let i = 22; i < 54; i += 4) sum += view.getUint32(i);
    sum += view.getUint32(54);
  } else {
    for (let i = 14; i < 42; i += 2) sum += view.getUint16(i);
  }
  return sum;
}

function timePerPacket(work) {
  let sink = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) {
    const sample = samples[i % samples.length];
    sink += work(sample);
  }
  const elapsed = Number(process.hrtime.bigint() - start);
  if (sink === -1) console.log('unreachable');
  return elapsed / iterations;
}

const cases = {
  ref: (sample) => referenceRead(sample.data),
  decode: (sample) => decodePacket(sample.data, sample.proto).length,
  describe: (sample) => describePacket(sample.data, sample.proto).length,
  json: (sample) => packetJsonText(sample.data, sample.proto).length,
};
if (before !== undefined) {
  cases.decode_before = (sample) => before.decodePacket(sample.data, sample.proto).length;
  cases.json_before = (sample) => before.json(sample.data, sample.proto).length;
}
// The older build must write what this one writes, or the comparison would mean nothing.
for (const sample of samples) {
  if (before !== undefined && before.json(sample.data, sample.proto) !== packetJsonText(sample.data, sample.proto)) {
    throw new Error(`${options.dist} writes another JSON for a ${sample.data.length}-byte packet`);
  }
}

for (const work of Object.values(cases)) timePerPacket(work);
const times = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
for (let round = 0; round < rounds; round++) {
  for (const [name, work] of Object.entries(cases)) times[name].push(timePerPacket(work));
  console.log(
    `round ${round + 1}: ${Object.keys(cases)
      .map((name) => `${name} ${times[name].at(-1).toFixed(1)} ns`)
      .join(', ')}`,
  );
}
const ns = Object.fromEntries(Object.entries(times).map(([name, list]) => [name, median(list)]));
let result =
  `RESULT ratio=${(ns.decode / ns.ref).toFixed(1)} decode_ns=${ns.decode.toFixed(1)} ref_ns=${ns.ref.toFixed(1)}` +
  ` describe_ns=${ns.describe.toFixed(1)} json_ns=${ns.json.toFixed(1)}`;
if (before !== undefined) {
  result +=
    ` decode_before_ns=${ns.decode_before.toFixed(1)} json_before_ns=${ns.json_before.toFixed(1)}` +
    ` decode_ratio=${(ns.decode / ns.decode_before).toFixed(2)} json_ratio=${(ns.json_before / ns.json).toFixed(2)}`;
}
console.log(result);
