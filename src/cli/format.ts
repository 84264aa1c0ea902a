import { sampleJson } from '../output/sample-json';
import type { LineFormat } from '../output/sample-lines';
import { sampleText } from '../output/sample-text';
import type { OvnSampleEvent } from '../ovn/event';
import type { PsampleSample } from '../psample/sample';
import { CliUsageError } from './errors';

export type OutputFormat = LineFormat;

export function parseFormat(value: string): OutputFormat {
  if (value !== 'json' && value !== 'text') throw new CliUsageError(`--format ${value}: use json or text`);
  return value;
}

/** One output line; with an OVN event, its sentence (text, after ` | `) or the whole event (JSON, as `event`). */
export function formatSample(message: PsampleSample, format: OutputFormat, event?: OvnSampleEvent): string {
  return format === 'text' ? sampleText(message, event) : sampleJson(message, event);
}
