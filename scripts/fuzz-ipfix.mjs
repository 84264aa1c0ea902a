// npm run fuzz:ipfix [-- --seconds S] [--seed N]   (after npm run build)
//
// The fuzzing campaign over the IPFIX decoder (dist/ipfix, as built), for S seconds (default 60):
// fast-check generates and shrinks the inputs, three kinds in turn:
//  - mutations of the real OVS 3.1 messages of test/fixtures/ipfix (bytes overwritten, cut,
//    extended, spliced between real ones), after the real templates;
//  - messages built from random templates (any field: IANA and enterprise elements, right and
//    wrong lengths, variable-length ones, options templates, withdrawals) with records that fit
//    them, nearly fit them, or are random bytes;
//  - random bytes.
// A finding is an exception, or a series after which the counts no longer account for every
// datagram and data set; fast-check shrinks it and prints the smallest counterexample.
// Not coverage-guided: Jazzer.js's prebuilt libFuzzer addon needs glibc 2.38 (Debian 12 has 2.36).
// The last line:
//   FUZZ target=ipfix executions=<n> seconds=<s> findings=<n> datagrams=<n> records=<n> malformed=<n>
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: options } = parseArgs({ options: { seconds: { type: 'string', default: '60' }, seed: { type: 'string' } } });
const { IpfixDatagramDecoder } = await import(pathToFileURL(join(root, 'dist', 'ipfix', 'datagram-decoder.js')).href);
const { emptyIpfixStats } = await import(pathToFileURL(join(root, 'dist', 'ipfix', 'stats.js')).href);

const fixture = readFileSync(join(root, 'test', 'fixtures', 'ipfix', 'ovs-3.1-dummy.txt'), 'utf8')
  .trim()
  .split('\n')
  .map((line) => Buffer.from(line.split(' ')[1], 'hex'));
const templates = fixture.filter((bytes) => bytes.readUInt16BE(16) === 2);
const DECODER = { templateLifetimeMs: 1000, templateWaitMs: 50, pendingLimit: 8, templateFallback: true };

const u16 = (v) => [(v >> 8) & 0xff, v & 0xff];
const u32 = (v) => [...u16(v >>> 16), ...u16(v & 0xffff)];

// Elements the decoder reads, and any other.
const elementIds = fc.oneof(
  fc.constantFrom(
    1,
    2,
    4,
    7,
    8,
    10,
    11,
    12,
    14,
    27,
    28,
    31,
    56,
    58,
    60,
    61,
    80,
    82,
    138,
    144,
    167,
    176,
    177,
    178,
    179,
    192,
    195,
    243,
    244,
    256,
  ),
  fc.integer({ min: 0, max: 0x7fff }),
);
const field = fc.record({
  id: elementIds,
  enterprise: fc.oneof(fc.constant(0), fc.constant(6876), fc.nat()),
  length: fc.oneof(fc.constantFrom(1, 2, 4, 6, 8, 16, 0xffff), fc.integer({ min: 0, max: 64 })),
});
const template = fc.record({
  id: fc.integer({ min: 256, max: 270 }),
  fields: fc.array(field, { minLength: 1, maxLength: 12 }),
  scope: fc.nat({ max: 3 }),
  options: fc.boolean(),
});

function fieldSpec(f) {
  const id = f.id & 0x7fff;
  if (f.enterprise === 0) return [...u16(id), ...u16(f.length)];
  return [...u16(id | 0x8000), ...u16(f.length), ...u32(f.enterprise >>> 0)];
}

/** A record that fits the template, with `slack` bytes more or fewer in one place. */
function record(t, values, slack) {
  const bytes = [];
  t.fields.forEach((f, i) => {
    const fill = values[i % values.length] ?? 0;
    if (f.length === 0xffff) {
      const n = fill % 300;
      bytes.push(...(n < 255 ? [n] : [255, ...u16(n)]), ...new Array(n).fill(fill & 0xff));
    } else bytes.push(...new Array(f.length).fill(fill & 0xff));
  });
  if (slack > 0) bytes.push(...new Array(slack).fill(0));
  if (slack < 0) bytes.length = Math.max(0, bytes.length + slack);
  return bytes;
}

function message(domain, sequence, sets) {
  const body = sets.flatMap(([id, bytes]) => [...u16(id), ...u16(bytes.length + 4), ...bytes]);
  return Buffer.from([...u16(10), ...u16(16 + body.length), ...u32(1_795_000_000), ...u32(sequence >>> 0), ...u32(domain >>> 0), ...body]);
}

const built = fc
  .record({
    domain: fc.constantFrom(0, 1, 0x2b000001),
    sequence: fc.nat(),
    templates: fc.array(template, { minLength: 1, maxLength: 3 }),
    withdraw: fc.option(fc.integer({ min: 256, max: 270 })),
    records: fc.array(
      fc.tuple(fc.nat({ max: 2 }), fc.array(fc.nat({ max: 1000 }), { minLength: 1, maxLength: 4 }), fc.integer({ min: -3, max: 3 })),
      { maxLength: 6 },
    ),
    order: fc.boolean(),
  })
  .map(({ domain, sequence, templates: ts, withdraw, records, order }) => {
    const templateSets = ts.map((t) => {
      const scope = t.options ? Math.min(Math.max(1, t.scope), t.fields.length) : 0;
      const head = t.options ? [...u16(t.id), ...u16(t.fields.length), ...u16(scope)] : [...u16(t.id), ...u16(t.fields.length)];
      return [t.options ? 3 : 2, [...head, ...t.fields.flatMap(fieldSpec)]];
    });
    const dataSets = records.map(([which, values, slack]) => {
      const t = ts[which % ts.length];
      return [t.id, record(t, values, slack)];
    });
    const withdrawal = withdraw === null ? [] : [[2, [...u16(withdraw), 0, 0]]];
    const datagrams = [
      message(domain, sequence, templateSets),
      ...dataSets.map((set, i) => message(domain, sequence + i, [set])),
      ...withdrawal.map((set) => message(domain, sequence, [set])),
    ];
    return order ? datagrams : datagrams.reverse();
  });

const mutated = fc
  .record({
    index: fc.nat({ max: fixture.length - 1 }),
    edits: fc.array(fc.tuple(fc.nat(), fc.nat({ max: 255 })), { maxLength: 8 }),
    cut: fc.option(fc.nat()),
    tail: fc.uint8Array({ maxLength: 16 }),
  })
  .map(({ index, edits, cut, tail }) => {
    const bytes = Buffer.from(fixture[index]);
    for (const [at, value] of edits) bytes[at % bytes.length] = value;
    return [Buffer.concat([cut === null ? bytes : bytes.subarray(0, cut % (bytes.length + 1)), tail])];
  });

const series = fc.array(
  fc.oneof(
    built,
    mutated,
    fc.uint8Array({ maxLength: 400 }).map((b) => [Buffer.from(b)]),
    fc.constantFrom(...fixture.map((b) => [b])),
  ),
  {
    minLength: 1,
    maxLength: 12,
  },
);

const totals = { executions: 0, datagrams: 0, records: 0, malformed: 0 };
const started = performance.now();
const property = fc.property(series, (groups) => {
  totals.executions++;
  const decoder = new IpfixDatagramDecoder(DECODER, emptyIpfixStats());
  let samples = 0;
  const take = (sample) => {
    samples++;
    if (typeof sample.observationDomainId !== 'number' || !(sample.weight >= 0)) throw new Error('a sample without its domain or weight');
  };
  for (const t of templates) decoder.decode(t, { address: '127.0.0.1', port: 1 }, 0, take);
  let now = 0;
  for (const datagram of groups.flat()) {
    now += 10;
    decoder.expire(now);
    decoder.decode(datagram, { address: '127.0.0.1', port: 1 + (now % 3) }, now, take);
  }
  const s = decoder.stats;
  totals.datagrams += s.datagrams;
  totals.records += s.records;
  totals.malformed += s.malformed;
  if (s.datagrams !== s.malformed + s.messages) throw new Error(`datagrams unaccounted: ${JSON.stringify(s)}`);
  if (s.records !== samples) throw new Error(`records unaccounted: ${JSON.stringify(s)}`);
  if (s.templateMissing !== s.templateLate + s.templateLost + s.pending) throw new Error(`data sets unaccounted: ${JSON.stringify(s)}`);
  if (s.pending > DECODER.pendingLimit) throw new Error(`pending beyond its limit: ${JSON.stringify(s)}`);
});

let findings = 0;
try {
  fc.assert(property, {
    numRuns: Number.MAX_SAFE_INTEGER,
    interruptAfterTimeLimit: Number(options.seconds) * 1000,
    markInterruptAsFailure: false,
    ...(options.seed === undefined ? {} : { seed: Number(options.seed) }),
  });
} catch (error) {
  findings = 1;
  console.error(error.message);
}
const seconds = ((performance.now() - started) / 1000).toFixed(1);
console.log(
  `FUZZ target=ipfix executions=${totals.executions} seconds=${seconds} findings=${findings} datagrams=${totals.datagrams} records=${totals.records} malformed=${totals.malformed}`,
);
process.exit(findings === 0 ? 0 : 1);
