import type { Logger } from 'pino';
import type { FlowSubject } from '../events/network-event';
import { NativeFlows, type NativeFlow, type NativeFlowCounts } from '../events/native-flows';
import type { OvnPsampleMetrics } from '../metrics/metrics';
import type { Pipeline } from './event-pipeline';
import type { FlowIntervals } from './flow-intervals';
import type { WatchCounts } from './watch-summary';

/**
 * Flows the native table holds per interval, per flow record allowed: its key is finer than a
 * record's (the cookie sequence, the raw fields), and a filter drops some of its flows, so it
 * holds more than --aggregate-max-flows before it counts overflow itself.
 */
export const NATIVE_FLOWS_PER_RECORD = 4;

/**
 * watch --aggregate over the psample socket when nothing needs each packet (no pcapng, no
 * --count): the socket's batches go to native flows (src/events/native-flows.ts), drained after
 * each delivery (the metrics stay current), when packets waited out their window, and as each
 * interval ends. Each drained flow counts as the per-packet path counts its packets: into watch's
 * counts, the metrics, the filter (once per flow and chain) and the interval's flows.
 */
export function nativeFlowsOf(
  pipeline: Pipeline,
  intervals: FlowIntervals,
  maxFlows: number,
  bySourcePort: boolean,
  groupWindowMs: number,
  counts: WatchCounts,
  accept: (subject: FlowSubject) => boolean,
  metrics: OvnPsampleMetrics | undefined,
  log: Logger,
): NativeFlows {
  let malformedRecords = 0;
  const visit = (flow: NativeFlow, c: NativeFlowCounts): void => {
    counts.packets += c.sampledPackets;
    metrics?.observeCounts(flow, c.sampledPackets, c.packets);
    const accepted = (flow.accepted ??= accept(flow));
    if (!accepted) {
      counts.filtered += c.sampledPackets;
      return;
    }
    counts.shown += c.sampledPackets;
    intervals.addCounts(flow, c.samples, c.packets, c.firstMs, c.lastMs, c.sampledPackets);
  };
  const drain = (final: boolean, endInterval: boolean): void => {
    const drained = native.drain(final, endInterval, visit);
    const overflow = drained.overflow;
    if (overflow.sampledPackets > 0) {
      counts.packets += overflow.sampledPackets;
      counts.shown += overflow.sampledPackets;
      intervals.addOverflow(overflow.sampledPackets, overflow.samples, overflow.packets);
    }
    if (drained.malformedRecords > malformedRecords) {
      log.warn(
        { malformedRecords: drained.malformedRecords },
        `${drained.malformedRecords - malformedRecords} sample record(s) reached outside their batch and were skipped with the rest of it`,
      );
      malformedRecords = drained.malformedRecords;
    }
  };
  const native = new NativeFlows({
    assembler: pipeline.assembler,
    ...(pipeline.ovn === undefined ? {} : { decoder: pipeline.ovn.decoder }),
    ...(pipeline.ovn?.pods === undefined ? {} : { pods: pipeline.ovn.pods }),
    groupWindowMs,
    maxFlows: maxFlows * NATIVE_FLOWS_PER_RECORD,
    bySourcePort,
    due: () => drain(false, false),
  });
  pipeline.socket!.on('batch', (batch) => {
    native.add(batch);
    drain(false, false);
  });
  intervals.beforeEachEnd((final) => drain(final, true));
  return native;
}
