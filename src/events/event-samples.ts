import type { PsampleMessage } from '../psample/types';
import type { NetworkEvent } from './network-event';

/**
 * What a formatter reads of an event's samples without making them all: an event the assembler
 * made knows its first sample and their count; any other NetworkEvent is asked for `samples`.
 */
export interface SampleSummary {
  readonly firstSample: PsampleMessage;
  readonly sampleCount: number;
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
