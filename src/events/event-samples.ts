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
