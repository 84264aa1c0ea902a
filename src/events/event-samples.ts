import type { PsampleBatch } from '../psample/batch';
import type { PsampleMessage } from '../psample/types';
import type { NetworkEvent } from './network-event';

/**
 * What a formatter reads of an event's samples and time without making them: an event the
 * assembler made knows its first sample, their count and its time as numbers; any other
 * NetworkEvent is asked for `samples` and `timestampNs`.
 */
export interface SampleSummary {
  readonly firstSample: PsampleMessage;
  readonly sampleCount: number;
  /** timestampNs split into whole seconds since the epoch and the nanoseconds after them: no bigint arithmetic per line. */
  readonly epochSeconds: number;
  readonly nanoseconds: number;
  /** timestampNs as a number (to about 256 ns): for time arithmetic without a bigint. */
  readonly timeNs: number;
  /** The first sample's batch, when it came in one: a native writer reads its record there (at `recordAt`). */
  readonly recordBatch: PsampleBatch | undefined;
  readonly recordAt: number;
  /** Whether the time is the record's (the kernel's), not the arrival time that stands in for it. */
  readonly recordTime: boolean;
}

export function summaryOf(event: NetworkEvent): SampleSummary | undefined {
  return 'firstSample' in event ? (event as NetworkEvent & SampleSummary) : undefined;
}

export function firstSampleOf(event: NetworkEvent): PsampleMessage {
  return summaryOf(event)?.firstSample ?? event.samples[0]!;
}

export function sampleCountOf(event: NetworkEvent): number {
  return summaryOf(event)?.sampleCount ?? event.samples.length;
}

export function epochSecondsOf(event: NetworkEvent): number {
  return summaryOf(event)?.epochSeconds ?? Number(event.timestampNs / 1_000_000_000n);
}

export function nanosecondsOf(event: NetworkEvent): number {
  return summaryOf(event)?.nanoseconds ?? Number(event.timestampNs % 1_000_000_000n);
}

/** The event's time in ms since the epoch (fractional). */
export function epochMsOf(event: NetworkEvent): number {
  const known = summaryOf(event);
  return known === undefined ? Number(event.timestampNs / 1_000n) / 1_000 : known.timeNs / 1e6;
}

/** psample's probability is scaled to this: 2^32 - 1 stands for 1 (include/uapi/linux/psample.h). */
const PROBABILITY_ONE = 0xffffffff;

/**
 * The packets a sample stands for, from how it was sampled: 1 in `rate` packets, or, when
 * `probability` is set (OVS's sample action), 1 / (rate / 2^32-1). A rate of 0 says nothing
 * (no sampler gives it): the sample stands for itself.
 */
export function packetsSampledBy(sample: Pick<PsampleMessage, 'rate' | 'probability'>): number {
  if (sample.rate === 0) return 1;
  return sample.probability ? PROBABILITY_ONE / sample.rate : sample.rate;
}

/**
 * The packets on the wire a sampled packet stands for, whichever source reported it: its IPFIX
 * record's weight (packetDeltaCount, OVS's own estimate, exact as sent), else what its first psample
 * sample's sampling says (packetsSampledBy). What `top`, the metrics and `watch --aggregate` count.
 */
export function packetsStoodFor(event: NetworkEvent): number {
  return event.ipfix?.weight ?? packetsSampledBy(firstSampleOf(event));
}
