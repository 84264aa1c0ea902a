import type { OvnSampleEvent } from '../ovn/event';
import { decodePsampleSamples } from '../psample/decode';
import type { PsampleSample } from '../psample/sample';
import { CliUsageError } from './errors';
import { formatSample, type OutputFormat } from './format';
import { datagramsFromFile, datagramsFromHex } from './read-input';

export interface DecodeOptions {
  hex?: string[];
  file?: string;
  format: OutputFormat;
}

/** Decodes every datagram before printing anything, so bad input never leaves half an answer. */
export function decodeDatagrams(options: DecodeOptions): PsampleSample[] {
  if ((options.hex?.length ?? 0) > 0 === (options.file !== undefined)) {
    throw new CliUsageError('decode: give either --hex HEX (repeatable) or --file FILE');
  }
  const datagrams = options.file !== undefined ? datagramsFromFile(options.file) : datagramsFromHex(options.hex ?? []);
  return datagrams.flatMap((bytes, i) => {
    const messages = decodePsampleSamples(bytes);
    if (messages.length === 0) {
      throw new CliUsageError(`input ${i + 1} (${bytes.byteLength} bytes) holds no psample message`);
    }
    return messages;
  });
}

export function printDecoded(
  messages: readonly PsampleSample[],
  format: OutputFormat,
  events: readonly (OvnSampleEvent | undefined)[] | undefined,
  write: (line: string) => void,
): void {
  messages.forEach((message, i) => write(formatSample(message, format, events?.[i])));
}
