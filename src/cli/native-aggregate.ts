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

/** How often the native flows are drained at most: the metrics are this current. */
export const NATIVE_DRAIN_EVERY_MS = 1000;

/**
 * watch --aggregate over the psample socket when nothing needs each packet (no pcapng, no
 * --count): the socket's reader thread adds its batches to native flows
 * (src/events/native-flows.ts) where it reads them, and JavaScript drains them every second (or
 * each interval, if shorter: the metrics stay current), when packets waited out their window,
 * before each metrics scrape, and as each interval ends. Batches the socket handed over before it
 * was fed are added here. Each drained flow counts as the per-packet path counts its packets: into
 * watch's counts, the metrics, the filter (once per flow and chain) and the interval's flows.
 */
export function nativeFlowsOf(
  pipeline: Pipeline,
  intervals: FlowIntervals,
  maxFlows: number,
  bySourcePort: boolean,
  groupWindowMs: number,
  intervalMs: number,
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
    drainEveryMs: Math.min(NATIVE_DRAIN_EVERY_MS, intervalMs),
  });
  pipeline.socket!.on('batch', (batch) => {
    native.add(batch);
    drain(false, false);
  });
  native.readFrom(pipeline.socket!);
  // A scrape sees every packet whose grouping window has passed, as the per-packet path shows it.
  metrics?.beforeEachScrape(() => drain(false, false));
  intervals.beforeEachEnd((final) => drain(final, true));
  return native;
}
