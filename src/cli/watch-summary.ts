import type { OvnDecoderStats } from '../ovn/decode-stats';
import type { PsampleStats } from '../psample/types';

export interface WatchCounts {
  /** Packets assembled from the samples. */
  packets: number;
  shown: number;
  filtered: number;
  /** With --aggregate: flow records written, and the sampled packets counted in no record (their interval's table was full). */
  flows?: { records: number; overflow: number };
}

function sum(record: Readonly<Record<string, number>>): number {
  return Object.values(record).reduce((a, b) => a + b, 0);
}

/** What a watch saw and what it did not show, as log fields and as one sentence. */
export function watchSummary(
  socket: PsampleStats,
  counts: WatchCounts,
  decoder: OvnDecoderStats | undefined,
  readiness?: { fields: Record<string, unknown>; text: string },
): { fields: Record<string, unknown>; text: string } {
  const fields = {
    received: socket.received,
    packets: counts.packets,
    shown: counts.shown,
    filtered: counts.filtered,
    ...(counts.flows === undefined ? {} : { flowRecords: counts.flows.records, flowOverflow: counts.flows.overflow }),
    kernelDrops: socket.kernelDrops,
    queueDrops: socket.queueDrops,
    closeDiscards: socket.closeDiscards,
    familyGaps: socket.familyGaps,
    malformed: socket.malformed,
    ...(decoder === undefined ? {} : { decoded: decoder.decoded, unknownCookies: decoder.unknown, staleCookies: decoder.stale }),
    ...readiness?.fields,
  };
  const cookies =
    decoder === undefined
      ? 'cookies not decoded'
      : `cookies: ${decoder.decoded} decoded, ${sum(decoder.unknown)} unknown, ${sum(decoder.stale)} stale`;
  const shown =
    counts.flows === undefined
      ? `${counts.shown} shown`
      : `${counts.shown} aggregated into ${counts.flows.records} flow records (${counts.flows.overflow} sampled packets in none: the flow table was full)`;
  const text =
    `summary: ${socket.received} samples received (${counts.packets} packets), ${shown}, ${counts.filtered} filtered out; ` +
    `dropped ${socket.kernelDrops} in the kernel and ${socket.queueDrops} in the queue, ${socket.closeDiscards} unread at exit; ` +
    `${socket.familyGaps} psample family gap(s); ${socket.malformed} malformed; ${cookies}${readiness === undefined || readiness.text === '' ? '' : `; ${readiness.text}`}`;
  return { fields, text };
}
