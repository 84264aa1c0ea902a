import fc from 'fast-check';
import { expect, it } from 'vitest';
import { NetworkEventAssembler } from '../../src/events/event-assembler';
import { packetsSampledBy } from '../../src/events/event-samples';
import { FlowAggregator, type FlowInterval } from '../../src/events/flow-aggregator';
import { NativeFlows, type NativeFlow, type NativeFlowCounts } from '../../src/events/native-flows';
import { OvnPsampleMetrics } from '../../src/metrics/metrics';
import { FlowJsonFormatter } from '../../src/output/flow-json';
import type { PsampleMessage } from '../../src/index';
import { addon } from '../../src/native/binding';
import { PsampleBatch } from '../../src/psample/batch';
import { tcpSyn, udp } from '../cli/support/frames';
import { batchOf, batchesOf, messagesOf, MS, packetArb, T0 } from './support/random-packets';

// The native flows against the per-packet path they replace in watch --aggregate: the same
// batches (the addon's own parser) through NetworkEventAssembler + FlowAggregator.add +
// OvnPsampleMetrics.observe, and through NativeFlows + addCounts + observeCounts, must give the
// same flow records and the same metrics.

interface Run {
  readonly records: string;
  readonly interval: FlowInterval;
  readonly metrics: string;
}

async function perPacket(batches: readonly PsampleBatch[], windowMs: number, maxFlows: number): Promise<Run> {
  const assembler = new NetworkEventAssembler({ groupWindowMs: windowMs });
  const flows = new FlowAggregator(0, maxFlows);
  const metrics = new OvnPsampleMetrics();
  assembler.on('event', (event) => {
    metrics.observe(event);
    flows.add(event);
  });
  for (const batch of batches) assembler.pushBatch(batch);
  assembler.close();
  const interval = flows.take(1000);
  return { records: new FlowJsonFormatter().format(interval), interval, metrics: await metrics.registry.metrics() };
}

async function native(
  batches: readonly PsampleBatch[],
  windowMs: number,
  maxFlows: number,
  options: { drainEach?: boolean; nativeMaxFlows?: number } = {},
): Promise<Run> {
  const flows = new FlowAggregator(0, maxFlows);
  const metrics = new OvnPsampleMetrics();
  const table = new NativeFlows({
    assembler: new NetworkEventAssembler({ groupWindowMs: windowMs }),
    groupWindowMs: windowMs,
    maxFlows: options.nativeMaxFlows ?? maxFlows * 4,
    bySourcePort: false,
    due: () => undefined,
  });
  const visit = (flow: NativeFlow, c: NativeFlowCounts): void => {
    metrics.observeCounts(flow, c.sampledPackets, c.packets);
    flows.addCounts(flow, c.samples, c.packets, c.firstMs, c.lastMs, c.sampledPackets);
  };
  const drain = (final: boolean): void => {
    const { overflow } = table.drain(final, final, visit);
    flows.addOverflow(overflow.sampledPackets, overflow.samples, overflow.packets);
  };
  for (const batch of batches) {
    table.add(batch);
    if (options.drainEach === true) drain(false);
  }
  drain(true);
  table.close();
  const interval = flows.take(1000);
  return { records: new FlowJsonFormatter().format(interval), interval, metrics: await metrics.registry.metrics() };
}

it('the same batches give the same flow records and metrics natively as packet by packet (random packets, cookies, timing, batch cuts)', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(packetArb, { minLength: 1, maxLength: 30 }),
      fc.array(fc.nat(200), { maxLength: 5 }),
      fc.constantFrom(0, 50),
      fc.boolean(),
      async (packets, cuts, windowMs, drainEach) => {
        const batches = batchesOf(messagesOf(packets), cuts);
        const expected = await perPacket(batches, windowMs, 10_000);
        const actual = await native(batches, windowMs, 10_000, { drainEach });
        expect(actual.records).toBe(expected.records);
        expect(actual.metrics).toBe(expected.metrics);
      },
    ),
    { numRuns: 150 },
  );
});

it('a packet whose samples straddle two deliveries is one packet; the same bytes on another datapath are another', async () => {
  const data = tcpSyn({ src: '10.0.0.1', dst: '10.0.0.2', srcPort: 40_000, dstPort: 80 });
  const sample = (point: number, datapath: number, atMs: bigint): Partial<PsampleMessage> => ({
    group: 7,
    proto: 0x800,
    data,
    userCookie: Uint8Array.from([0x02, 0, 0, datapath, 0, 0, 0, point]),
    timestampNs: T0 + atMs * MS,
    rate: 1,
  });
  const batches = [batchOf([sample(1, 1, 0n)]), batchOf([sample(2, 1, 1n), sample(3, 2, 1n)])];
  const run = await native(batches, 50, 100, { drainEach: true });
  expect(run.interval.flows.map((f) => [f.chain.map((s) => s.cookie?.obsPointId), f.sampledPackets, f.samples])).toEqual([
    [[1, 2], 1, 2],
    [[3], 1, 1],
  ]);
  expect(run.records).toBe((await perPacket(batches, 50, 100)).records);
});

it('group events are skipped, as the per-packet path skips them', async () => {
  const data = udp({ src: '10.0.0.1', dst: '10.0.0.2', srcPort: 1, dstPort: 2 });
  const batches = [
    batchOf([
      { command: 'new-group', group: 7 },
      { group: 7, proto: 0x800, data, timestampNs: T0, rate: 1 },
      { command: 'del-group', group: 7 },
    ]),
  ];
  const run = await native(batches, 50, 100);
  expect(run.interval.total).toEqual({ sampledPackets: 1, samples: 1, packets: 1 });
  expect(run.interval.flows[0]!.chain.map((s) => s.text)).toEqual(['No OVS cookie']);
  expect(run.records).toBe((await perPacket(batches, 50, 100)).records);
});

it('past the native cap a packet is counted as overflow, in the interval total and its overflow', async () => {
  const messages = [80, 81, 82, 80, 83].map((port, i) => ({
    group: 7,
    proto: 0x800,
    data: tcpSyn({ src: '10.0.0.1', dst: '10.0.0.2', srcPort: 40_000 + i, dstPort: port }),
    timestampNs: T0 + BigInt(i * 100) * MS,
    rate: 3,
  }));
  const run = await native([batchOf(messages)], 50, 100, { nativeMaxFlows: 2 });
  expect(run.interval.flows.map((f) => [f.dstPort, f.sampledPackets])).toEqual([
    [80, 2],
    [81, 1],
  ]);
  expect(run.interval.total).toEqual({ sampledPackets: 5, samples: 5, packets: 15 });
  expect(run.interval.overflow).toEqual({ sampledPackets: 2, samples: 2, packets: 6 });
});

it('a visitor that throws loses no other flow, and the first exception comes out once all are handed on', () => {
  const table = new NativeFlows({
    assembler: new NetworkEventAssembler(),
    groupWindowMs: 0,
    maxFlows: 100,
    bySourcePort: false,
    due: () => undefined,
  });
  table.add(
    batchOf(
      [1, 2, 3].map((i) => ({
        group: 7,
        proto: 0x800,
        data: udp({ src: '10.0.0.1', dst: `10.0.0.${i + 1}`, srcPort: 1, dstPort: 2 }),
        timestampNs: T0,
        rate: 1,
      })),
    ),
  );
  const seen: (string | undefined)[] = [];
  expect(() =>
    table.drain(false, false, (flow) => {
      seen.push(flow.fields.dst);
      throw new Error(`consumer failed on ${flow.fields.dst}`);
    }),
  ).toThrow('consumer failed on 10.0.0.2');
  expect(seen).toEqual(['10.0.0.2', '10.0.0.3', '10.0.0.4']);
  table.close();
});

it('close() during a drain: the flows it took are all handed on, and the table takes nothing more', () => {
  const table = new NativeFlows({
    assembler: new NetworkEventAssembler(),
    groupWindowMs: 50,
    maxFlows: 100,
    bySourcePort: false,
    due: () => undefined,
  });
  table.add(
    batchOf(
      [1, 2].map((i) => ({
        group: 7,
        proto: 0x800,
        data: udp({ src: '10.0.0.1', dst: `10.0.0.${i + 1}`, srcPort: 1, dstPort: 2 }),
        timestampNs: T0,
        rate: 1,
      })),
    ),
  );
  const seen: number[] = [];
  table.drain(true, false, (flow, counts) => {
    seen.push(counts.sampledPackets);
    table.close();
  });
  expect(seen).toEqual([1, 1]);
  expect(table.closed).toBe(true);
  table.add(batchOf([{ group: 7, proto: 0x800, data: new Uint8Array(20), timestampNs: T0, rate: 1 }]));
  expect(table.drain(true, true, () => expect.fail('a closed table hands on nothing')).overflow.sampledPackets).toBe(0);
});

it("the C++ rule of what a sample stands for is TypeScript's packetsSampledBy (its checked copy)", () => {
  fc.assert(
    fc.property(fc.nat(0xffffffff), fc.boolean(), (rate, probability) => {
      expect(addon.NativeFlowTable.packetsSampledBy(rate, probability)).toBe(packetsSampledBy({ rate, probability }));
    }),
  );
});
