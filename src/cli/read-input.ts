import { readFileSync } from 'node:fs';

import { captureFrames } from '../capture/capture-file';
import { udpDatagram, type CapturedDatagram, type FrameSkip } from '../capture/udp-datagrams';
import { CaptureFileError } from '../capture/errors';
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

/** The UDP datagrams of a capture file, and how many frames held none, by reason. */
export interface CaptureDatagrams {
  readonly datagrams: CapturedDatagram[];
  readonly frames: number;
  readonly skipped: Partial<Record<FrameSkip, number>>;
}

/** A pcap or pcapng capture ('-': standard input) as UDP datagrams, every port. */
export function udpDatagramsFromCapture(path: string, flag: string): CaptureDatagrams {
  let content: Buffer;
  try {
    content = readFileSync(path === '-' ? 0 : path);
  } catch (error) {
    throw new CliUsageError(`${flag} ${path}: ${(error as Error).message}`);
  }
  const datagrams: CapturedDatagram[] = [];
  const skipped: Partial<Record<FrameSkip, number>> = {};
  let frames = 0;
  try {
    for (const frame of captureFrames(content)) {
      frames++;
      const found = udpDatagram(frame);
      if (typeof found === 'string') skipped[found] = (skipped[found] ?? 0) + 1;
      else datagrams.push(found);
    }
  } catch (error) {
    if (error instanceof CaptureFileError) throw new CliUsageError(`${flag} ${path}: ${error.message}`);
    throw error;
  }
  return { datagrams, frames, skipped };
}
