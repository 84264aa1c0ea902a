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
}

function summary(event: NetworkEvent): SampleSummary | undefined {
  return 'firstSample' in event ? (event as NetworkEvent & SampleSummary) : undefined;
}

export function firstSampleOf(event: NetworkEvent): PsampleMessage {
  return summary(event)?.firstSample ?? event.samples[0]!;
}

export function sampleCountOf(event: NetworkEvent): number {
  return summary(event)?.sampleCount ?? event.samples.length;
}

export function epochSecondsOf(event: NetworkEvent): number {
  return summary(event)?.epochSeconds ?? Number(event.timestampNs / 1_000_000_000n);
}

export function nanosecondsOf(event: NetworkEvent): number {
  return summary(event)?.nanoseconds ?? Number(event.timestampNs % 1_000_000_000n);
}
