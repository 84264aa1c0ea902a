import { afterEach, expect, it } from 'vitest';

import { NetworkEventAssembler, type NetworkEventAssemblerOptions } from '../../src/events/event-assembler';
import type { NetworkEvent } from '../../src/events/network-event';
import { encodePsample, openFakePsample, type PsampleMessage, type PsampleSocket } from '../../src/index';
import { addon, NATIVE_LITTLE_ENDIAN } from '../../src/native/binding';
import { decodePacket } from '../../src/packet/decode';
import type { PacketFieldsView } from '../../src/packet/fields';
import { PsampleBatch } from '../../src/psample/batch';
import { statValues } from '../../src/psample/stats';
import { icmpEcho, tcpSyn, udp } from '../cli/support/frames';

// The assembler takes whole batches where they lie (pushBatch) or one message at a time (push):
// both must make the same events. Batches come from the fake reader (the addon's own parser).
let socket: PsampleSocket | undefined;
afterEach(() => socket?.close());

const cookie = (domain: number, point: number): Uint8Array => {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setUint32(0, domain);
  new DataView(bytes.buffer).setUint32(4, point);
  return bytes;
};
const ANP_PASS = cookie(0x2b000003, 1012);
const ISOLATION_DROP = cookie(0x2b000003, 2024);
const OTHER_DATAPATH = cookie(0x2b000005, 1012);

const ping = icmpEcho({ src: '10.244.0.6', dst: '10.244.0.4', seq: 1 });
const syn = tcpSyn({ src: '10.244.0.6', dst: '10.244.0.4', srcPort: 40000, dstPort: 8080 });
const dns = udp({ src: '10.244.0.6', dst: '10.96.0.10', srcPort: 53000, dstPort: 53 });

const T0 = 1_750_000_000_000_000_000n;
const sample = (data: Uint8Array, userCookie: Uint8Array | undefined, offsetNs = 0n): Partial<PsampleMessage> => ({
  group: 42,
  iifindex: 5,
  proto: 0x800,
  origSize: data.length,
  timestampNs: T0 + offsetNs,
  data,
  userCookie,
});

// What OVN makes of a few packets: one sampled at two stages (a pass, then a drop), one sampled
// three times at one stage, one on another datapath, one without a cookie, one with an odd cookie.
const traffic: Partial<PsampleMessage>[] = [
  sample(ping, ANP_PASS),
  sample(syn, ANP_PASS, 1000n),
  sample(syn, ANP_PASS, 2000n),
  sample(ping, ISOLATION_DROP, 3000n),
  sample(syn, ANP_PASS, 4000n),
  sample(dns, OTHER_DATAPATH, 5000n),
  sample(dns, undefined, 6000n),
  sample(syn, Uint8Array.of(1, 2, 3), 7000n),
];

function batchOf(messages: readonly Partial<PsampleMessage>[]): PsampleBatch {
  const [buffer, count] = addon.decode(Buffer.concat(messages.map((m) => encodePsample(m))), 0, statValues());
  return new PsampleBatch(buffer, count, NATIVE_LITTLE_ENDIAN);
}

/** What a test compares of an event: everything a formatter reads. */
function summary(event: NetworkEvent): object {
  return {
    timestampNs: event.timestampNs,
    group: event.group,
    iifindex: event.iifindex,
    verdict: event.verdict,
    chain: event.chain.map((step) => ({ ...step })),
    fields: (event.fields as PacketFieldsView).toObject(),
    samples: event.samples.map((s) => [s.groupSeq, s.timestampNs, s.userCookie && Buffer.from(s.userCookie).toString('hex')]),
    packet: event.packet,
  };
}

function assemble(options: NetworkEventAssemblerOptions, feed: (assembler: NetworkEventAssembler) => void): NetworkEvent[] {
  const events: NetworkEvent[] = [];
  const assembler = new NetworkEventAssembler(options);
  assembler.on('event', (event) => events.push(event));
  feed(assembler);
  assembler.close();
  return events;
}

it('groups the samples of each packet: steps per distinct cookie, repeats counted, other datapaths and bytes apart', () => {
  const events = assemble({}, (assembler) => assembler.pushBatch(batchOf(traffic)));
  expect(events.map((e) => e.chain.map((s) => [s.text, s.samples]))).toEqual([
    [
      ['app 43 datapath 3 point 1012', 1],
      ['app 43 datapath 3 point 2024', 1],
    ],
    [['app 43 datapath 3 point 1012', 3]],
    [['app 43 datapath 5 point 1012', 1]],
    [['No OVS cookie', 1]],
    [['No OVS cookie', 1]],
  ]);
  expect(events.map((e) => e.samples.length)).toEqual([2, 3, 1, 1, 1]);
  expect(events[1]!.fields).toMatchObject({
    network: 'ipv4',
    src: '10.244.0.6',
    dst: '10.244.0.4',
    protocol: 6,
    srcPort: 40000,
    dstPort: 8080,
  });
  expect(events[0]!.fields).toMatchObject({ protocol: 1, icmpType: 8, icmpCode: 0, srcPort: undefined });
  expect(events[0]!.packet).toEqual(decodePacket(ping, 0x800));
});

it('pushBatch() and push() make the same events, grouped or not', () => {
  for (const groupWindowMs of [50, 0]) {
    const batched = assemble({ groupWindowMs }, (assembler) => assembler.pushBatch(batchOf(traffic)));
    const single = assemble({ groupWindowMs }, (assembler) => {
      for (const message of batchOf(traffic)) assembler.push(message.toObject());
    });
    expect(batched.map(summary)).toEqual(single.map(summary));
  }
});

it('a chain is made once: packets that take the same way share it (formatters cache on it)', () => {
  const events = assemble({}, (assembler) => {
    assembler.pushBatch(batchOf([sample(ping, ANP_PASS), sample(ping, ISOLATION_DROP, 10n)]));
    assembler.flush();
    assembler.pushBatch(batchOf([sample(ping, ANP_PASS, 10_000_000_000n), sample(ping, ISOLATION_DROP, 10_000_000_010n)]));
  });
  expect(events).toHaveLength(2);
  expect(events[1]!.chain).toBe(events[0]!.chain);
});

it('a listener that throws loses no packet of the batch; the error comes after the batch', () => {
  const seen: number[] = [];
  const assembler = new NetworkEventAssembler({ groupWindowMs: 0 });
  assembler.on('event', (event) => {
    seen.push(Number(event.timestampNs - T0));
    if (seen.length === 2) throw new Error('listener failed on purpose');
  });
  expect(() => assembler.pushBatch(batchOf(traffic))).toThrow('listener failed on purpose');
  expect(seen).toEqual([0, 1000, 2000, 3000, 4000, 5000, 6000, 7000]);
  assembler.close();
});

it('close() from a listener: no event after it', () => {
  const seen: number[] = [];
  const assembler = new NetworkEventAssembler({ groupWindowMs: 0 });
  assembler.on('event', (event) => {
    seen.push(Number(event.timestampNs - T0));
    if (seen.length === 3) assembler.close();
  });
  assembler.pushBatch(batchOf(traffic));
  expect(seen).toEqual([0, 1000, 2000]);
});

it("from a socket's batches: every packet once, grouped across batches, in arrival order", async () => {
  const fake = openFakePsample();
  socket = fake.socket;
  const assembler = new NetworkEventAssembler({ groupWindowMs: 20 });
  const events: NetworkEvent[] = [];
  assembler.on('event', (event) => events.push(event));
  socket.on('batch', (batch) => assembler.pushBatch(batch));
  // The samples of one packet split over two hand-offs of the reader.
  fake.reader.deliver(traffic.slice(0, 2));
  await new Promise((resolve) => setImmediate(resolve));
  fake.reader.deliver(traffic.slice(2));
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(events.map((e) => e.samples.length)).toEqual([2, 3, 1, 1, 1]);
  expect(events.map((e) => e.samples.map((s) => Number(s.timestampNs - T0)))).toEqual([
    [0, 3000],
    [1000, 2000, 4000],
    [5000],
    [6000],
    [7000],
  ]);
  assembler.close();
});
