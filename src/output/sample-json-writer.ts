import type { OvnSampleEvent } from '../ovn/event';
import type { PsampleMessage } from '../psample/types';
import { packetPieces, sampleJsonHead, sampleJsonMiddle } from './sample-json';
import { sharedJsonBytes } from './shared-json';

/** Room allocated at a time; the lines of many batches share it, as Node's Buffer pool does. */
const CHUNK_BYTES = 256 * 1024;
/** `,"event":` and `}\n`. */
const FIXED_BYTES = 11;

/**
 * Writes sampleJson() lines, each followed by '\n', as UTF-8 bytes: the same bytes as the
 * strings, without joining most of each line again per sample. What repeats across samples (the
 * packet's hex and headers, the decoder's event for a cookie) is encoded once and copied; only
 * the sample's own fields, ASCII by construction, are written per line.
 */
export class SampleJsonWriter {
  private buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  /** Where the lines not yet taken begin. */
  private start = 0;
  private end = 0;

  append(message: PsampleMessage, event?: OvnSampleEvent): void {
    const packet = packetPieces(message);
    const hex = (packet.hexBytes ??= Buffer.from(packet.hex, 'latin1'));
    const packetMember = message.command === 'sample' ? (packet.packetMemberBytes ??= Buffer.from(packet.packetMember)) : undefined;
    const eventJson = event === undefined ? undefined : sharedJsonBytes(event);
    const head = sampleJsonHead(message);
    const middle = sampleJsonMiddle(message);
    // head and middle are ASCII: one byte per character.
    this.reserve(head.length + hex.length + middle.length + (packetMember?.length ?? 0) + (eventJson?.length ?? 0) + FIXED_BYTES);
    const buffer = this.buffer;
    let at = this.end;
    at += buffer.write(head, at, 'latin1');
    buffer.set(hex, at);
    at += hex.length;
    at += buffer.write(middle, at, 'latin1');
    if (packetMember !== undefined) {
      buffer.set(packetMember, at);
      at += packetMember.length;
    }
    if (eventJson !== undefined) {
      at += buffer.write(',"event":', at, 'latin1');
      buffer.set(eventJson, at);
      at += eventJson.length;
    }
    buffer[at++] = 0x7d; // }
    buffer[at++] = 0x0a; // \n
    this.end = at;
  }

  /**
   * The lines appended since the last take(). The bytes stay the caller's: later lines are
   * written after them or into a new chunk, never over them (a stream may keep them queued).
   */
  take(): Buffer {
    const lines = this.buffer.subarray(this.start, this.end);
    this.start = this.end;
    return lines;
  }

  private reserve(bytes: number): void {
    if (this.end + bytes <= this.buffer.length) return;
    const pending = this.buffer.subarray(this.start, this.end);
    const next = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, 2 * (pending.length + bytes)));
    next.set(pending);
    this.buffer = next;
    this.start = 0;
    this.end = pending.length;
  }
}
