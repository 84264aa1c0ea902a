// IPFIX records into the assembler (pushIpfix): records decoded by the IPFIX decoder from
// messages as OVS sends them (one data record each), grouped into packets by their fields, with
// the hand-offs psample's batches are tested for: a listener that throws, close() in a listener.
import { expect, it } from 'vitest';
import { NetworkEventAssembler } from '../../src/events/event-assembler';
import type { NetworkEvent } from '../../src/events/network-event';
import { decodeIpfixDatagrams } from '../../src/ipfix/decode';
import type { IpfixSample } from '../../src/ipfix/types';
import { dataSet, FLOW_FIELDS, flowRecord, message, templateSet } from '../ipfix/support/ipfix-writer';

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
