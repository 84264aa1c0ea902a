import { expect, it } from 'vitest';
import {
  encodePsample,
  FlowAggregator,
  FlowJsonFormatter,
  NetworkEventAssembler,
  packetsSampledBy,
  type NetworkEvent,
  type PsampleMessage,
} from '../../src/index';
import { addon, NATIVE_LITTLE_ENDIAN } from '../../src/native/binding';
import { PsampleBatch } from '../../src/psample/batch';
import { statValues } from '../../src/psample/stats';
import { icmpEcho, tcpSyn, udp } from '../cli/support/frames';

// The library's FlowAggregator over the assembler's events from real batches (the addon's own
// parser), without OVN: steps carry the cookie, endpoints are the addresses.
const T0 = 1_750_000_000_000_000_000n;
const MS = 1_000_000n;
const cookie = (point: number): Uint8Array => Uint8Array.from([0x02, 0, 0, 1, 0, 0, point >> 8, point & 0xff]);

function eventsOf(messages: readonly Partial<PsampleMessage>[]): NetworkEvent[] {
  const [buffer, count] = addon.decode(Buffer.concat(messages.map((m) => encodePsample(m))), 0, statValues());
  const assembler = new NetworkEventAssembler({ groupWindowMs: 0 });
  const events: NetworkEvent[] = [];
  assembler.on('event', (event) => events.push(event));
  assembler.pushBatch(new PsampleBatch(buffer, count, NATIVE_LITTLE_ENDIAN));
  return events;
}

const sample = (data: Uint8Array, point: number, atMs: bigint, rate = 0xffffffff, probability = true): Partial<PsampleMessage> => ({
  group: 42,
  proto: 0x800,
  data,
  userCookie: cookie(point),
  timestampNs: T0 + atMs * MS,
  rate,
  probability,
});

it('what a sample stands for: 1 in rate, 1/probability with the flag, itself when the rate says nothing', () => {
  expect(packetsSampledBy({ rate: 0xffffffff, probability: true })).toBe(1);
  expect(packetsSampledBy({ rate: 0x7fffffff, probability: true })).toBeCloseTo(2, 6);
  expect(packetsSampledBy({ rate: 100, probability: false })).toBe(100);
  expect(packetsSampledBy({ rate: 0, probability: true })).toBe(1);
});

it('sums packets into flows by chain, addresses, protocol and port or ICMP type; kernel times out of order still give first and last seen', () => {
  const syn = (srcPort: number, dstPort: number): Uint8Array => tcpSyn({ src: '10.0.0.1', dst: '10.0.0.2', srcPort, dstPort });
  const events = eventsOf([
    sample(syn(40_000, 80), 1, 30n, 10, false),
    sample(syn(40_001, 80), 1, 10n, 10, false), // earlier, handed on later
    sample(syn(40_002, 80), 2, 20n), // another cookie: another chain
    sample(syn(40_003, 443), 1, 40n),
    sample(udp({ src: '10.0.0.1', dst: '10.0.0.2', srcPort: 5000, dstPort: 80 }), 1, 50n), // UDP 80 is not TCP 80
    sample(icmpEcho({ src: '10.0.0.1', dst: '10.0.0.2', seq: 1 }), 1, 60n),
    sample(icmpEcho({ src: '10.0.0.1', dst: '10.0.0.3', seq: 1 }), 1, 70n), // another destination
  ]);
  const flows = new FlowAggregator(0);
  for (const event of events) flows.add(event);
  expect(flows.size).toBe(6);
  const interval = flows.take(1000);
  expect(flows.size).toBe(0);
  expect(
    interval.flows.map((f) => [f.protocol, f.dstPort ?? `icmp ${f.icmpType}/${f.icmpCode}`, f.dstAddress, f.sampledPackets, f.packets]),
  ).toEqual([
    [6, 80, '10.0.0.2', 2, 20],
    [6, 80, '10.0.0.2', 1, 1],
    [6, 443, '10.0.0.2', 1, 1],
    [17, 80, '10.0.0.2', 1, 1],
    [1, 'icmp 8/0', '10.0.0.2', 1, 1],
    [1, 'icmp 8/0', '10.0.0.3', 1, 1],
  ]);
  const first = interval.flows[0]!;
  expect(first.firstSeenMs - Number(T0 / MS)).toBeCloseTo(10, 2);
  expect(first.lastSeenMs - Number(T0 / MS)).toBeCloseTo(30, 2);
  expect(interval.total).toEqual({ sampledPackets: 7, samples: 7, packets: 25 });

  // Without pods, a side is its address; the chain is the cookie's.
  const lines = new FlowJsonFormatter()
    .format(interval)
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(lines).toHaveLength(7);
  expect(lines[0]).toEqual({
    version: 1,
    type: 'flow',
    start: '1970-01-01T00:00:00.000Z',
    end: '1970-01-01T00:00:01.000Z',
    verdict: 'unknown',
    message: 'app 2 datapath 1 point 1',
    src: { ip: '10.0.0.1' },
    dst: { ip: '10.0.0.2' },
    chain: [
      {
        verdict: 'unknown',
        text: 'app 2 datapath 1 point 1',
        policy: '-',
        samples: 1,
        cookie: '0200000100000001',
        obsDomainId: 0x02000001,
        obsPointId: 1,
      },
    ],
    network: 'ipv4',
    protocol: 6,
    dstPort: 80,
    sampledPackets: 2,
    samples: 2,
    packets: 20,
    firstSeen: '2025-06-15T15:06:40.010Z',
    lastSeen: '2025-06-15T15:06:40.030Z',
  });
  expect(lines[6]).toEqual({
    version: 1,
    type: 'interval',
    start: '1970-01-01T00:00:00.000Z',
    end: '1970-01-01T00:00:01.000Z',
    flows: 6,
    sampledPackets: 7,
    samples: 7,
    packets: 25,
    overflow: { sampledPackets: 0, samples: 0, packets: 0 },
  });
});

it('past maxFlows a new flow is only counted as overflow, while the flows already held keep counting; the next interval starts empty', () => {
  const events = eventsOf(
    [80, 81, 82, 80, 83].map((port, i) =>
      sample(tcpSyn({ src: '10.0.0.1', dst: '10.0.0.2', srcPort: 40_000 + i, dstPort: port }), 1, BigInt(i)),
    ),
  );
  const flows = new FlowAggregator(0, 2);
  for (const event of events) flows.add(event);
  const interval = flows.take(1);
  expect(interval.flows.map((f) => [f.dstPort, f.sampledPackets])).toEqual([
    [80, 2],
    [81, 1],
  ]);
  expect(interval.overflow).toEqual({ sampledPackets: 2, samples: 2, packets: 2 });
  expect(interval.total.sampledPackets).toBe(5);
  for (const event of events.slice(2, 3)) flows.add(event);
  expect(flows.take(2)).toMatchObject({
    startMs: 1,
    endMs: 2,
    flows: [expect.objectContaining({ dstPort: 82 })],
    overflow: { sampledPackets: 0 },
  });
});
