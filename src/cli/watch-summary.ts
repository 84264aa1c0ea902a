import type { OvnDecoderStats } from '../ovn/decode-stats';
import type { IpfixStats } from '../ipfix/stats';
import type { SourceStats } from './event-pipeline';

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

/** How many were shown: lines, or with --aggregate the flow records they went into. */
function shownText(counts: WatchCounts): string {
  return counts.flows === undefined
    ? `${counts.shown} shown`
    : `${counts.shown} aggregated into ${counts.flows.records} flow records (${counts.flows.overflow} sampled packets in none: the flow table was full)`;
}

function cookiesText(decoder: OvnDecoderStats | undefined): string {
  return decoder === undefined
    ? 'cookies not decoded'
    : `cookies: ${decoder.decoded} decoded, ${sum(decoder.unknown)} unknown, ${sum(decoder.stale)} stale`;
}

/**
 * An IPFIX watch's summary: every count of IPFIX_STATS as a field, and in the sentence what was
 * lost where (the sequence numbers see every loss between OVS's exporter and the socket, the
 * receive buffer's drops among them; a sample lost inside OVS before its exporter cannot be seen).
 */
function ipfixSummary(
  stats: IpfixStats,
  counts: WatchCounts,
  decoder: OvnDecoderStats | undefined,
  readiness: { fields: Record<string, unknown>; text: string } | undefined,
): { fields: Record<string, unknown>; text: string } {
  const fields = {
    source: 'ipfix',
    ...stats,
    packets: counts.packets,
    shown: counts.shown,
    filtered: counts.filtered,
    ...(counts.flows === undefined ? {} : { flowRecords: counts.flows.records, flowOverflow: counts.flows.overflow }),
    ...(decoder === undefined ? {} : { decoded: decoder.decoded, unknownCookies: decoder.unknown, staleCookies: decoder.stale }),
    ...readiness?.fields,
  };
  const text =
    `summary: ${stats.received} IPFIX records received (${counts.packets} packets), ${shownText(counts)}, ${counts.filtered} filtered out; ` +
    `lost ${stats.sequenceLost} by the exporters' sequence numbers (${stats.receiveBufferDrops} in the receive buffer), ` +
    `${stats.exporterNotSent} unsent by the exporters, ${stats.templateLost} without a template, ${stats.queueDrops} in the queue, ${stats.closeDiscards} unread at exit; ` +
    `${stats.malformed} malformed, ${stats.rejectedExporter} from exporters not allowed; ${cookiesText(decoder)}` +
    `${readiness === undefined || readiness.text === '' ? '' : `; ${readiness.text}`}`;
  return { fields, text };
}

/** What a watch saw and what it did not show, as log fields and as one sentence. */
export function watchSummary(
  source: SourceStats,
  counts: WatchCounts,
  decoder: OvnDecoderStats | undefined,
  readiness?: { fields: Record<string, unknown>; text: string },
): { fields: Record<string, unknown>; text: string } {
  if (source.source === 'ipfix') return ipfixSummary(source.stats, counts, decoder, readiness);
  const socket = source.stats;
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
  const cookies = cookiesText(decoder);
  const text =
    `summary: ${socket.received} samples received (${counts.packets} packets), ${shownText(counts)}, ${counts.filtered} filtered out; ` +
    `dropped ${socket.kernelDrops} in the kernel and ${socket.queueDrops} in the queue, ${socket.closeDiscards} unread at exit; ` +
    `${socket.familyGaps} psample family gap(s); ${socket.malformed} malformed; ${cookies}${readiness === undefined || readiness.text === '' ? '' : `; ${readiness.text}`}`;
  return { fields, text };
}
