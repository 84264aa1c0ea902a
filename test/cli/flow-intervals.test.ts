import { expect, it } from 'vitest';
import { FlowIntervals } from '../../src/cli/flow-intervals';
import type { FlowInterval } from '../../src/events/flow-aggregator';
import { packetFields, type PacketFieldsView } from '../../src/packet/fields';
import { udp } from './support/frames';

// FlowIntervals' hook for a source that holds packets (watch --aggregate's native flows): what it
// adds as an interval ends is in that interval, whatever it throws.

const fields: PacketFieldsView = packetFields(udp({ src: '10.0.0.1', dst: '10.0.0.2', srcPort: 1, dstPort: 53 }), 0x800);
const subject = { chain: [], verdict: 'unknown' as const, src: undefined, dst: undefined, fields, group: 7 };

it('a hook that throws as the last interval ends: what it added before is written, then its error comes out', () => {
  const written: FlowInterval[] = [];
  const intervals = new FlowIntervals(
    3600,
    10,
    undefined,
    (interval) => written.push(interval),
    () => 1_000,
  );
  intervals.beforeEachEnd((final) => {
    expect(final).toBe(true);
    intervals.addCounts(subject, 3, 30, 10, 20, 2);
    intervals.addOverflow(1, 1, 10);
    throw new Error('the source failed');
  });
  expect(() => intervals.stop()).toThrow('the source failed');
  expect(written).toHaveLength(1);
  expect(written[0]!.flows.map((f) => [f.dstPort, f.sampledPackets, f.samples, f.packets, f.firstSeenMs, f.lastSeenMs])).toEqual([
    [53, 2, 3, 30, 10, 20],
  ]);
  expect(written[0]!.total).toEqual({ sampledPackets: 3, samples: 4, packets: 40 });
  expect(written[0]!.overflow).toEqual({ sampledPackets: 1, samples: 1, packets: 10 });
  // Stopped: nothing more is taken, and a second stop writes nothing.
  intervals.addCounts(subject, 1, 1, 30, 30, 1);
  intervals.stop();
  expect(written).toHaveLength(1);
});
