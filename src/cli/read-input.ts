import { readFileSync } from 'node:fs';

import { parseHex } from '../output/hex';
import { CliUsageError } from './errors';

/** Each --hex value is one datagram. */
export function datagramsFromHex(values: readonly string[]): Uint8Array[] {
  return values.map((value) => {
    const bytes = parseHex(value);
    if (!bytes) {
      throw new CliUsageError(`--hex "${value.slice(0, 40)}": not an even number of hexadecimal digits`);
    }
    return bytes;
  });
}

/**
 * A file of hex lines (one datagram a line, as in test/fixtures/psample/*.hex) or one binary
 * datagram; '-' reads standard input.
 */
export function datagramsFromFile(path: string): Uint8Array[] {
  let content: Buffer;
  try {
    content = readFileSync(path === '-' ? 0 : path);
  } catch (error) {
    throw new CliUsageError(`--file ${path}: ${(error as Error).message}`);
  }
  const text = content.toString('latin1');
  if (/^[\s0-9a-fA-Fx]*$/.test(text)) {
    const lines = text.split('\n').filter((line) => line.trim() !== '');
    if (lines.length === 0) throw new CliUsageError(`--file ${path}: empty`);
    return lines.map((line, i) => {
      const bytes = parseHex(line);
      if (!bytes) throw new CliUsageError(`--file ${path}, line ${i + 1}: not an even number of hexadecimal digits`);
      return bytes;
    });
  }
  return [new Uint8Array(content.buffer, content.byteOffset, content.byteLength)];
}
