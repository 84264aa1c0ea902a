// node scripts/bench/ipfix.mjs [--records N] [--rounds R] [--seconds S]   (after npm run build; root not needed)
//
// What an IPFIX record costs against a psample sample, measured in the same run:
//  1. decode: N real OVS 3.1 data messages (template 280, IPv4 TCP: test/fixtures/ipfix) through
//     the IPFIX decoder into IpfixSamples, against N psample messages of OVS local sampling (the
//     same packet, an 8-byte cookie) parsed by the native parser the live reader uses, in batches
//     of 256 as the reader hands them over, each sample's cookie and packet fields read.
//     Records per second per core (CPU time of this process, one thread).
//  2. through the OVN decoder: the same, plus each record's cookie resolved by OvnSampleDecoder
//     against a northbound mirror of 10,000 NetworkPolicy ACLs (fed in-process), as the pipeline
//     does: decode(obs_domain_id, obs_point_id) for IPFIX, decodeSample() for psample. CPU per record.
//  3. watch's path: the same records and samples, each of a packet of its own (the ports differ),
//     through the OVN decoder and the event assembler (grouping in the 50 ms window, then handed
//     on) into watch's JSON lines: pushIpfix() for IPFIX, pushBatch() of the reader's batches for
//     psample. CPU per packet.
//  4. the live source: scripts/bench/ipfix-sender.c floods the source unpaced for S seconds on
//     loopback; the records it took in per second and its CPU per record (all threads).
// Rounds alternate IPFIX and psample because other work shares the machine; medians are compared.
// The last line is the verdict:
//   RESULT ipfix_records_per_core_s=… psample_samples_per_core_s=… decode_ratio=<ipfix ns/psample ns>
//          ovn_ipfix_ns=… ovn_psample_ns=… ovn_ratio=… watch_ipfix_ns=… watch_psample_ns=… watch_ratio=…
//          live_records_s=… live_cpu_ns=… live_loss=…
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { compileTools } from './lib/compile.mjs';
import { median } from './lib/percentiles.mjs';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = join(projectRoot, 'dist');
const { values: options } = parseArgs({
  options: {
    records: { type: 'string', default: '200000' },
    rounds: { type: 'string', default: '7' },
    seconds: { type: 'string', default: '5' },
  },
});
const RECORDS = Number(options.records);
const ROUNDS = Number(options.rounds);
const BATCH = 256;
const ACLS = 10_000;
const ACL_NEW_APP_ID = 2;
const schemaPath = join(projectRoot, 'node_modules', '.cache', 'ovn-psample', 'ovn-schemas-25.03', 'ovn-nb.ovsschema');
if (!existsSync(join(dist, 'ipfix', 'source.js')) || !existsSync(schemaPath)) {
  console.error('Needs the build (npm run build) and the OVN schemas (run the tests in test/ovn once).');
  process.exit(1);
}
const load = (path) => import(pathToFileURL(join(dist, path)).href);
const { IpfixDatagramDecoder } = await load('ipfix/datagram-decoder.js');
const { emptyIpfixStats } = await load('ipfix/stats.js');
const { openIpfix } = await load('ipfix/source.js');
const { decodePsampleSamples } = await load('psample/decode.js');
const { encodePsample } = await load('psample/encode.js');
const { TableCache } = await load('ovsdb/cache.js');
const { parseSchema } = await load('ovsdb/schema.js');
const { OvnSampleDecoder } = await load('ovn/decoder.js');
const { northboundSelection } = await load('ovn/selection.js');
const { NetworkEventAssembler } = await load('events/event-assembler.js');
const { JsonFormatter } = await load('output/event-json.js');
const { LineBuffer } = await load('output/line-buffer.js');
const { PsampleBatch } = await load('psample/batch.js');
const { statValues } = await load('psample/stats.js');
const { addon, NATIVE_LITTLE_ENDIAN } = await load('native/binding.js');

// --- the inputs -------------------------------------------------------------------------------

const fixture = readFileSync(join(projectRoot, 'test', 'fixtures', 'ipfix', 'ovs-3.1-dummy.txt'), 'utf8')
  .trim()
  .split('\n')
  .map((line) => Buffer.from(line.split(' ')[1], 'hex'));
const templates = fixture.filter((bytes) => bytes.readUInt16BE(16) === 2);
const record280 = fixture.find((bytes) => bytes.readUInt16BE(16) === 280);
const domainOf = (n) => ((ACL_NEW_APP_ID << 24) | (1 + (n % 8))) >>> 0;
const pointOf = (n) => 1 + (n % ACLS);

/** Where record280 holds the TCP ports (found by their values: 40000 and 80). */
const portsAt = record280.indexOf(Buffer.from([0x9c, 0x40, 0x00, 0x50]), 20);

/** N OVS data messages, each its own datagram, with the cookies of the ACLs below; `distinct`: each of another packet (ports). */
function ipfixDatagrams(distinct = false) {
  return Array.from({ length: RECORDS }, (_, n) => {
    const bytes = Buffer.from(record280);
    bytes.writeUInt32BE(n + 2, 8);
    bytes.writeUInt32BE(domainOf(n), 12);
    bytes.writeUInt32BE(pointOf(n), 20);
    if (distinct) {
      bytes.writeUInt16BE(n & 0xffff, portsAt);
      bytes.writeUInt16BE(n >>> 16, portsAt + 2);
    }
    return bytes;
  });
}

/** The same packets as psample messages (OVS local sampling: an 8-byte cookie), BATCH to a buffer; `distinct` as above. */
function psampleBuffers(distinct = false) {
  const template = Buffer.from(
    '505400000002505400000001080045000028000040004006000000a000001a0000020' + '9c400500000000000000000500200000000000',
    'hex',
  );
  const buffers = [];
  for (let start = 0; start < RECORDS; start += BATCH) {
    const messages = [];
    for (let n = start; n < Math.min(RECORDS, start + BATCH); n++) {
      const frame = distinct ? Buffer.from(template) : template;
      if (distinct) {
        frame.writeUInt16BE(n & 0xffff, 34);
        frame.writeUInt16BE(n >>> 16, 36);
      }
      const cookie = Buffer.alloc(8);
      cookie.writeUInt32BE(domainOf(n), 0);
      cookie.writeUInt32BE(pointOf(n), 4);
      messages.push(
        encodePsample({ group: 42, iifindex: 3, proto: 0x0800, data: frame, userCookie: cookie, rate: 0xffffffff, probability: true }),
      );
    }
    buffers.push(Buffer.concat(messages));
  }
  return buffers;
}

function ovnDecoder() {
  const schema = parseSchema(JSON.parse(readFileSync(schemaPath, 'utf8')));
  const cache = new TableCache(schema, northboundSelection(schema));
  const decoder = new OvnSampleDecoder({ nbCache: cache });
  const uuid = (kind, n) => `00000000-0000-4000-800${kind}-${n.toString(16).padStart(12, '0')}`;
  const update = { Sampling_App: { [uuid(0, 1)]: { initial: { type: 'acl-new', id: ACL_NEW_APP_ID } } }, Sample: {}, ACL: {} };
  for (let n = 1; n <= ACLS; n++) {
    const policy = `namespace${n % 200}:policy${n}`;
    update.Sample[uuid(1, n)] = { initial: { metadata: n } };
    update.ACL[uuid(2, n)] = {
      initial: {
        name: `NP:${policy}:Ingress:0`,
        priority: 1001,
        direction: 'to-lport',
        match: `outport == @a${n}`,
        action: 'allow-related',
        tier: 2,
        sample_new: ['uuid', uuid(1, n)],
        external_ids: [
          'map',
          [
            ['k8s.ovn.org/owner-type', 'NetworkPolicy'],
            ['k8s.ovn.org/owner-controller', 'default-network-controller'],
            ['k8s.ovn.org/name', policy],
            ['direction', 'Ingress'],
          ],
        ],
      },
    };
  }
  cache.applyUpdate2(update);
  return decoder;
}

// --- the measured work --------------------------------------------------------------------------

const cpuNs = (work) => {
  const before = process.cpuUsage();
  const checksum = work();
  const used = process.cpuUsage(before);
  return { ns: (used.user + used.system) * 1000, checksum };
};

function ipfixRound(datagrams, ovn) {
  return cpuNs(() => {
    const decoder = new IpfixDatagramDecoder(
      { templateLifetimeMs: 3_600_000, templateWaitMs: 0, pendingLimit: 0, templateFallback: true },
      emptyIpfixStats(),
    );
    const exporter = { address: '127.0.0.1', port: 40000 };
    for (const t of templates) decoder.decode(t, exporter, 0, () => {});
    let sum = 0;
    const take =
      ovn === undefined
        ? (sample) => {
            sum += sample.observationPointId + sample.packet.srcPort;
          }
        : (sample) => {
            sum += sample.packet.srcPort;
            if (ovn.decode(sample.observationDomainId, sample.observationPointId).status === 'decoded') sum++;
          };
    for (const datagram of datagrams) decoder.decode(datagram, exporter, 0, take);
    if (decoder.stats.records !== RECORDS) throw new Error(`IPFIX: ${decoder.stats.records} of ${RECORDS} decoded`);
    return sum;
  });
}

function psampleRound(buffers, ovn) {
  return cpuNs(() => {
    let sum = 0;
    let count = 0;
    for (const buffer of buffers) {
      for (const sample of decodePsampleSamples(buffer)) {
        count++;
        const cookie = sample.userCookie;
        sum += cookie[7] + sample.data[34] + sample.iifindex;
        if (ovn !== undefined && ovn.decodeSample(sample).status === 'decoded') sum++;
      }
    }
    if (count !== RECORDS) throw new Error(`psample: ${count} of ${RECORDS} decoded`);
    return sum;
  });
}

/** watch's path: records or batches into the assembler (with OVN), every event written as a JSON line. */
function watchRound(push) {
  return cpuNs(() => {
    const assembler = new NetworkEventAssembler({ decoder: ovn, groupWindowMs: 50 });
    const formatter = new JsonFormatter(() => undefined);
    const out = new LineBuffer();
    let events = 0;
    let bytes = 0;
    assembler.on('event', (event) => {
      events++;
      formatter.write(event, out);
      if (out.end > 1 << 20) {
        bytes += out.take().length;
        out.recycle();
      }
    });
    push(assembler);
    assembler.close();
    if (events !== RECORDS) throw new Error(`watch: ${events} events of ${RECORDS} packets`);
    return bytes + out.take().length;
  });
}

const ipfixWatch = (datagrams) => {
  const decoder = new IpfixDatagramDecoder(
    { templateLifetimeMs: 3_600_000, templateWaitMs: 0, pendingLimit: 0, templateFallback: true },
    emptyIpfixStats(),
  );
  const exporter = { address: '127.0.0.1', port: 40000 };
  for (const t of templates) decoder.decode(t, exporter, 0, () => {});
  // As the source hands them on: the records of a turn of the event loop together.
  return (assembler) => {
    let batch = [];
    for (const datagram of datagrams) {
      decoder.decode(datagram, exporter, 0, (sample) => batch.push(sample));
      if (batch.length === BATCH) {
        assembler.pushIpfix(batch);
        batch = [];
      }
    }
    assembler.pushIpfix(batch);
  };
};

const psampleWatch = (buffers) => (assembler) => {
  for (const buffer of buffers) {
    const [records, count] = addon.decode(buffer, 0, statValues());
    assembler.pushBatch(new PsampleBatch(records, count, NATIVE_LITTLE_ENDIAN));
  }
};

const datagrams = ipfixDatagrams();
const buffers = psampleBuffers();
const ovn = ovnDecoder();
const distinctDatagrams = ipfixDatagrams(true);
const distinctBuffers = psampleBuffers(true);
const results = { ipfix: [], psample: [], ovnIpfix: [], ovnPsample: [], watchIpfix: [], watchPsample: [] };
// A warm-up round each, then alternating rounds.
ipfixRound(datagrams, ovn);
psampleRound(buffers, ovn);
watchRound(ipfixWatch(distinctDatagrams));
watchRound(psampleWatch(distinctBuffers));
for (let round = 0; round < ROUNDS; round++) {
  results.ipfix.push(ipfixRound(datagrams).ns / RECORDS);
  results.psample.push(psampleRound(buffers).ns / RECORDS);
  results.ovnIpfix.push(ipfixRound(datagrams, ovn).ns / RECORDS);
  results.ovnPsample.push(psampleRound(buffers, ovn).ns / RECORDS);
  results.watchIpfix.push(watchRound(ipfixWatch(distinctDatagrams)).ns / RECORDS);
  results.watchPsample.push(watchRound(psampleWatch(distinctBuffers)).ns / RECORDS);
}
const ipfixNs = median(results.ipfix);
const psampleNs = median(results.psample);
const ovnIpfixNs = median(results.ovnIpfix);
const ovnPsampleNs = median(results.ovnPsample);
const watchIpfixNs = median(results.watchIpfix);
const watchPsampleNs = median(results.watchPsample);
console.log(`decode, ns per record (CPU, median of ${ROUNDS}): IPFIX ${ipfixNs.toFixed(0)}, psample ${psampleNs.toFixed(0)}`);
console.log(`through the OVN decoder (${ACLS} ACLs), ns per record: IPFIX ${ovnIpfixNs.toFixed(0)}, psample ${ovnPsampleNs.toFixed(0)}`);
console.log(
  `watch's path (decode, OVN, assembler, JSON line), ns per packet: IPFIX ${watchIpfixNs.toFixed(0)}, psample ${watchPsampleNs.toFixed(0)}`,
);

// --- the live source ------------------------------------------------------------------------

const { tools, remove } = compileTools(join(projectRoot, 'scripts', 'bench'), ['ipfix-sender']);
const live = await (async () => {
  const source = await openIpfix({ port: 0 });
  let received = 0;
  source.on('batch', (batch) => {
    received += batch.length;
  });
  const before = process.cpuUsage();
  const started = performance.now();
  const { stdout } = await promisify(execFile)(tools['ipfix-sender'], ['--port', String(source.port), '--seconds', options.seconds]);
  const sent = JSON.parse(stdout).records;
  for (let waited = 0; received + source.stats().receiveBufferDrops < sent && waited < 5000; waited += 10) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const used = process.cpuUsage(before);
  const seconds = (performance.now() - started) / 1000;
  const stats = source.stats();
  await source[Symbol.asyncDispose]();
  return { sent, received, seconds, cpuNs: ((used.user + used.system) * 1000) / received, drops: stats.receiveBufferDrops };
})();
remove();
console.log(
  `live source, unpaced sender for ${options.seconds} s: ${live.sent} sent, ${live.received} received (${Math.round(live.received / live.seconds)}/s), ` +
    `${live.drops} receive-buffer drops, ${live.cpuNs.toFixed(0)} ns CPU per record received`,
);
console.log(
  `RESULT ipfix_records_per_core_s=${Math.round(1e9 / ipfixNs)} psample_samples_per_core_s=${Math.round(1e9 / psampleNs)} decode_ratio=${(ipfixNs / psampleNs).toFixed(2)} ` +
    `ovn_ipfix_ns=${ovnIpfixNs.toFixed(0)} ovn_psample_ns=${ovnPsampleNs.toFixed(0)} ovn_ratio=${(ovnIpfixNs / ovnPsampleNs).toFixed(2)} ` +
    `watch_ipfix_ns=${watchIpfixNs.toFixed(0)} watch_psample_ns=${watchPsampleNs.toFixed(0)} watch_ratio=${(watchIpfixNs / watchPsampleNs).toFixed(2)} ` +
    `live_records_s=${Math.round(live.received / live.seconds)} live_cpu_ns=${live.cpuNs.toFixed(0)} live_loss=${(live.drops / live.sent).toFixed(3)}`,
);
