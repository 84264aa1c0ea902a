// IPFIX records into the assembler (pushIpfix): records decoded by the IPFIX decoder from
// messages as OVS sends them (one data record each), grouped into packets by their fields, with
// the hand-offs psample's batches are tested for: a listener that throws, close() in a listener.
import { expect, it } from 'vitest';
import { NetworkEventAssembler } from '../../src/events/event-assembler';
import type { NetworkEvent } from '../../src/events/network-event';
import { decodeIpfixDatagrams } from '../../src/ipfix/decode';
import type { IpfixSample } from '../../src/ipfix/types';
import { dataSet, FLOW_FIELDS, flowRecord, message, templateSet, uint } from '../ipfix/support/ipfix-writer';

const DOMAIN = 0x2b000003;
const ANP_PASS = 1012;
const ISOLATION_DROP = 2024;
const TEMPLATE = 256;

/** One message per record, as OVS exports them, the template first. */
function records(...flows: Parameters<typeof flowRecord>[]): IpfixSample[] {
  const datagrams = flows.map((flow, i) =>
    message({ sequence: i, domain: DOMAIN }, [
      ...(i === 0 ? [templateSet([{ id: TEMPLATE, fields: FLOW_FIELDS }])] : []),
      dataSet(TEMPLATE, [flowRecord(...flow)]),
    ]),
  );
  const decoded = decodeIpfixDatagrams(datagrams.map((bytes) => ({ bytes, exporter: { address: '127.0.0.1', port: 50000 }, timeMs: 0 })));
  expect(decoded.stats).toMatchObject({ records: flows.length, malformed: 0, templateLost: 0 });
  return decoded.samples;
}

// A packet sampled at two stages (pass, then drop), another packet (other ports), a record that stands for 4 packets.
const traffic = records(
  [ANP_PASS, '10.244.0.6', '10.244.0.4', 6, 40000, 8080],
  [ANP_PASS, '10.244.0.6', '10.96.0.10', 17, 53000, 53],
  [ISOLATION_DROP, '10.244.0.6', '10.244.0.4', 6, 40000, 8080],
  [ISOLATION_DROP, '10.244.0.7', '10.244.0.4', 6, 40001, 8080, 4],
);

it("groups one packet's records by their fields, and fills the event from them: no bytes, the record kept", () => {
  const assembler = new NetworkEventAssembler({ groupWindowMs: 60_000 });
  const events: NetworkEvent[] = [];
  assembler.on('event', (event) => events.push(event));
  assembler.pushIpfix(traffic);
  assembler.close();
  expect(events.map((event) => event.chain.map((step) => step.cookie?.obsPointId))).toEqual([
    [ANP_PASS, ISOLATION_DROP],
    [ANP_PASS],
    [ISOLATION_DROP],
  ]);
  const [first] = events;
  expect(first!.chain[0]!.text).toBe(`app ${DOMAIN >>> 24} datapath 3 point ${ANP_PASS}`);
  expect(first!.packet).toBeUndefined();
  expect(first!.samples.map((sample) => sample.data.length)).toEqual([0, 0]);
  expect(first!.samples[1]!.userCookie).toEqual(Uint8Array.of(0x2b, 0, 0, 3, 0, 0, 0x07, 0xe8));
  expect(first!.ipfix).toBe(traffic[0]);
  expect({ ...first!.fields }).toEqual({
    link: 'ethernet',
    etherType: 0x0800,
    length: 0,
    vlan: undefined,
    network: 'ipv4',
    src: '10.244.0.6',
    dst: '10.244.0.4',
    protocol: 6,
    ttl: undefined,
    srcPort: 40000,
    dstPort: 8080,
    icmpType: undefined,
    icmpCode: undefined,
    truncated: false,
  });
  expect(events[2]!.ipfix!.weight).toBe(4);
  expect(events[2]!.samples[0]!.rate).toBe(Math.round(0xffffffff / 4));
});

it('a listener that throws loses no packet of the records; the error comes after them', () => {
  const seen: (number | undefined)[] = [];
  const assembler = new NetworkEventAssembler({ groupWindowMs: 0 });
  assembler.on('event', (event) => {
    seen.push(event.ipfix?.sequenceNumber);
    if (seen.length === 2) throw new Error('listener failed on purpose');
  });
  expect(() => assembler.pushIpfix(traffic)).toThrow('listener failed on purpose');
  expect(seen).toEqual([0, 1, 2, 3]);
  assembler.close();
});

it('close() from a listener: no event after it', () => {
  const seen: (number | undefined)[] = [];
  const assembler = new NetworkEventAssembler({ groupWindowMs: 0 });
  assembler.on('event', (event) => {
    seen.push(event.ipfix?.sequenceNumber);
    if (seen.length === 2) assembler.close();
  });
  assembler.pushIpfix(traffic);
  expect(seen).toEqual([0, 1]);
});

it('groups by when OVS took each sample, not by arrival: two pings 0.5 s apart that arrive together stay two packets', () => {
  // As OVS sends them: flowStartDeltaMicroseconds first, the export second rounded up.
  const fields = [{ id: 158, length: 4 }, ...FLOW_FIELDS];
  const sampledAt = (sequence: number, point: number, exportTime: number, deltaUs: number): Buffer =>
    message({ sequence, domain: DOMAIN, exportTime }, [
      ...(sequence === 0 ? [templateSet([{ id: TEMPLATE, fields }])] : []),
      dataSet(TEMPLATE, [Uint8Array.from([...uint(deltaUs, 4), ...flowRecord(point, '10.244.0.6', '10.244.0.4', 1, 0, 0)])]),
    ]);
  const datagrams = [
    sampledAt(0, ANP_PASS, 1_795_000_001, 900_000),
    sampledAt(1, ISOLATION_DROP, 1_795_000_001, 899_800),
    sampledAt(2, ANP_PASS, 1_795_000_001, 400_000),
    sampledAt(3, ISOLATION_DROP, 1_795_000_001, 399_700),
  ];
  const decoded = decodeIpfixDatagrams(datagrams.map((bytes) => ({ bytes, exporter: { address: '127.0.0.1', port: 50000 }, timeMs: 0 })));
  const assembler = new NetworkEventAssembler({ groupWindowMs: 50 });
  const events: NetworkEvent[] = [];
  assembler.on('event', (event) => events.push(event));
  assembler.pushIpfix(decoded.samples);
  assembler.close();
  expect(events.map((event) => event.chain.map((step) => step.cookie?.obsPointId))).toEqual([
    [ANP_PASS, ISOLATION_DROP],
    [ANP_PASS, ISOLATION_DROP],
  ]);
  expect(events.map((event) => event.timestampNs)).toEqual([
    (1_795_000_001n * 1_000_000n - 900_000n) * 1000n,
    (1_795_000_001n * 1_000_000n - 400_000n) * 1000n,
  ]);
});
