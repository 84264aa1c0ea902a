// node scripts/bench/ovn-decode.mjs [--dist DIR] [--rounds R]   (after npm run build; the OVN
// schemas are fetched by the tests into node_modules/.cache/ovn-psample)
//
// Is OvnSampleDecoder.decode() O(1)? Northbound caches of 1,000 and 100,000 ovn-kubernetes-like
// NetworkPolicy ACLs (each with its Sample) are fed in-process, then the same number of decodes
// of random sampled point ids runs against each, alternating rounds because other work shares
// the machine; medians are compared. The reference is the floor for a decoder that would return a
// fresh event: one Map lookup among the sampled point ids plus one event-sized object per sample
// (the decoder returns the event it made for the cookie until the databases change: no object).
// The last line is the verdict:
//   RESULT scale_ratio=<100k/1k ns> ref_ratio=<100k/reference ns> decode_ns=<ns at 100k>
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { median } from './lib/percentiles.mjs';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values: options } = parseArgs({
  options: {
    dist: { type: 'string', default: join(projectRoot, 'dist') },
    rounds: { type: 'string', default: '7' },
  },
});
const rounds = Number(options.rounds);
const load = (path) => import(pathToFileURL(join(options.dist, path)).href);
const schemaPath = join(projectRoot, 'node_modules', '.cache', 'ovn-psample', 'ovn-schemas-25.03', 'ovn-nb.ovsschema');
if (!existsSync(join(options.dist, 'ovn', 'decoder.js')) || !existsSync(schemaPath)) {
  console.error('Needs the build (npm run build) and the OVN schemas (run the tests in test/ovn once).');
  process.exit(1);
}
const { TableCache } = await load('ovsdb/cache.js');
const { parseSchema } = await load('ovsdb/schema.js');
const { OvnSampleDecoder } = await load('ovn/decoder.js');
const { northboundSelection } = await load('ovn/selection.js');
const schema = parseSchema(JSON.parse(readFileSync(schemaPath, 'utf8')));

const ACL_NEW_APP_ID = 2;
const SAMPLED_POINTS = 4096;
const DECODES = 1_000_000;

function uuid(kind, n) {
  return `00000000-0000-4000-800${kind}-${n.toString(16).padStart(12, '0')}`;
}

function decoderWith(aclCount) {
  const cache = new TableCache(schema, northboundSelection(schema));
  const decoder = new OvnSampleDecoder({ nbCache: cache });
  const update = { Sampling_App: { [uuid(0, 1)]: { initial: { type: 'acl-new', id: ACL_NEW_APP_ID } } }, Sample: {}, ACL: {} };
  for (let n = 1; n <= aclCount; n++) {
    const policy = `namespace${n % 200}:policy${n % 5000}`;
    update.Sample[uuid(1, n)] = { initial: { metadata: n } };
    update.ACL[uuid(2, n)] = {
      initial: {
        name: `NP:${policy}:Ingress:0`,
        priority: 1001,
        direction: 'to-lport',
        match: `ip4.src == {$a${n}} && outport == @a${n * 7}`,
        action: 'allow-related',
        tier: 2,
        sample_new: ['uuid', uuid(1, n)],
        sample_est: ['uuid', uuid(1, n)],
        external_ids: [
          'map',
          [
            ['k8s.ovn.org/owner-type', 'NetworkPolicy'],
            ['k8s.ovn.org/owner-controller', 'default-network-controller'],
            ['k8s.ovn.org/name', policy],
            ['direction', 'Ingress'],
            ['k8s.ovn.org/id', `default-network-controller:NetworkPolicy:${policy}:Ingress:0:None:${n}`],
          ],
        ],
      },
    };
  }
  cache.applyUpdate2(update);
  const points = Uint32Array.from({ length: SAMPLED_POINTS }, () => 1 + Math.floor(Math.random() * aclCount));
  return { decoder, points };
}

function timeDecodes({ decoder, points }) {
  const domain = (ACL_NEW_APP_ID << 24) >>> 0;
  let decoded = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < DECODES; i++) {
    if (decoder.decode(domain, points[i & (SAMPLED_POINTS - 1)]).status === 'decoded') {
      decoded++;
    }
  }
  const ns = Number(process.hrtime.bigint() - started) / DECODES;
  if (decoded !== DECODES) {
    throw new Error(`only ${decoded} of ${DECODES} samples decoded`);
  }
  return ns;
}

function timeReference() {
  const verdicts = new Map(Array.from({ length: SAMPLED_POINTS }, (_, n) => [n + 1, { message: `verdict ${n}` }]));
  const points = Uint32Array.from({ length: SAMPLED_POINTS }, (_, n) => n + 1);
  let found = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < DECODES; i++) {
    const point = points[i & (SAMPLED_POINTS - 1)];
    const verdict = verdicts.get(point);
    const event = { status: 'decoded', obsDomainId: 0, obsPointId: point, message: verdict.message, acl: verdict, datapath: undefined };
    if (event.acl !== undefined) {
      found++;
    }
  }
  const ns = Number(process.hrtime.bigint() - started) / DECODES;
  if (found !== DECODES) {
    throw new Error('reference loop missed');
  }
  return ns;
}

const small = decoderWith(1_000);
const large = decoderWith(100_000);
const smallNs = [];
const largeNs = [];
const referenceNs = [];
for (let round = 0; round < rounds; round++) {
  smallNs.push(timeDecodes(small));
  largeNs.push(timeDecodes(large));
  referenceNs.push(timeReference());
  console.log(
    `round ${round + 1}: 1k ACLs ${smallNs.at(-1).toFixed(0)} ns | 100k ACLs ${largeNs.at(-1).toFixed(0)} ns | reference ${referenceNs.at(-1).toFixed(0)} ns`,
  );
}
const [s, l, r] = [median(smallNs), median(largeNs), median(referenceNs)];
console.log(
  `median: decode ${s.toFixed(0)} ns at 1k ACLs, ${l.toFixed(0)} ns at 100k ACLs (goal ratio ~1: O(1)); reference ${r.toFixed(0)} ns`,
);
console.log(`RESULT scale_ratio=${(l / s).toFixed(2)} ref_ratio=${(l / r).toFixed(2)} decode_ns=${l.toFixed(0)}`);
