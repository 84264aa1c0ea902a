import { sampleJson } from '../output/sample-json';
import { sampleText } from '../output/sample-text';
import type { PsampleMessage } from '../psample/types';
import { CliUsageError } from './errors';

export type OutputFormat = 'json' | 'text';

export function parseFormat(value: string): OutputFormat {
  if (value !== 'json' && value !== 'text') throw new CliUsageError(`--format ${value}: use json or text`);
  return value;
}

export function formatSample(message: PsampleMessage, format: OutputFormat, extra?: Record<string, unknown>): string {
  if (format === 'text') {
    const line = sampleText(message);
    const said = extra?.event as { message?: string } | undefined;
    return said?.message ? `${line} | ${said.message}` : line;
  }
  return JSON.stringify({ ...sampleJson(message), ...extra });
}
