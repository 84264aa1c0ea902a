import { OvsdbMessageSizeError, OvsdbProtocolError } from '../errors';
import { OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET, QUOTE, BACKSLASH, isJsonWhitespace } from './json-bytes';
import { parseLargeJson } from './lazy-json';
import { MessageBuffer } from './message-buffer';

/** Above this, a message is parsed without building its whole tree (see parseLargeJson). */
const LARGE_MESSAGE_BYTES = 1024 * 1024;
/** parseLargeJson keeps member offsets in Int32Arrays. */
export const MAX_MESSAGE_BYTES_LIMIT = 0x7fffffff;
/**
 * What a client accepts by default: the initial monitor reply of the decoder's NB selection is
 * about 600 bytes per ACL (60 MB for 100,000), its SB selection about 150 bytes per logical flow.
 */
export const DEFAULT_MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

/**
 * Splits the byte stream of a JSON-RPC connection into whole JSON texts. ovsdb-server writes
 * objects back to back with no delimiter, so message ends are found by tracking nesting depth
 * outside strings. Work is linear in the bytes received: each byte is scanned once here, a message
 * spanning reads is copied into blocks as it arrives and once more when complete, and it is
 * decoded as UTF-8 only when complete, so multi-byte sequences split across reads are safe.
 * Messages over 1 MiB are parsed without materializing their big row maps (see parseLargeJson).
 */
export class JsonStreamFramer {
  /** Bytes of the message in progress that arrived in earlier chunks. */
  private readonly pending = new MessageBuffer();
  private depth = 0;
  private inString = false;
  private escaped = false;

  constructor(
    private readonly onMessage: (message: unknown) => void,
    private readonly maxMessageBytes: number = DEFAULT_MAX_MESSAGE_BYTES,
  ) {}

  /**
   * Feeds received bytes; calls `onMessage` for each completed text. Throws OvsdbProtocolError
   * on garbage and OvsdbMessageSizeError past maxMessageBytes (having kept at most that many).
   * Returns how many of the bytes belong to messages, whitespace between them excluded: a peer
   * sending only whitespace shows no sign of life.
   */
  push(chunk: Buffer): number {
    let idle = 0;
    let start = this.depth === 0 ? -1 : 0;
    let depth = this.depth;
    let inString = this.inString;
    let escaped = this.escaped;
    const length = chunk.length;
    // Strings are skipped with native searches; backslashes are rare, so their position is cached.
    let nextBackslash = chunk.indexOf(BACKSLASH);
    for (let i = 0; i < length; i++) {
      if (inString) {
        if (escaped) {
          escaped = false;
          continue;
        }
        if (nextBackslash !== -1 && nextBackslash < i) {
          nextBackslash = chunk.indexOf(BACKSLASH, i);
        }
        const quote = chunk.indexOf(QUOTE, i);
        if (nextBackslash !== -1 && (quote === -1 || nextBackslash < quote)) {
          // An escape comes first: step over the backslash and the byte it escapes.
          i = nextBackslash;
          escaped = true;
        } else if (quote === -1) {
          i = length;
        } else {
          inString = false;
          i = quote;
        }
        continue;
      }
      const byte = chunk[i]!;
      if (byte === QUOTE && depth > 0) {
        inString = true;
      } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
        if (depth === 0) {
          start = i;
        }
        depth++;
      } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
        if (depth === 0) {
          throw this.garbage(`an unbalanced "${String.fromCharCode(byte)}"`);
        }
        depth--;
        if (depth === 0) {
          this.emit(chunk, start, i + 1);
          start = -1;
        }
      } else if (depth === 0) {
        if (!isJsonWhitespace(byte)) {
          throw this.garbage(`byte 0x${byte.toString(16)} outside any JSON object`);
        }
        idle++;
      }
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    if (depth > 0) {
      const rest = chunk.subarray(start < 0 ? 0 : start);
      if (this.pending.length + rest.length > this.maxMessageBytes) {
        throw new OvsdbMessageSizeError(this.maxMessageBytes, this.pending.length + rest.length);
      }
      this.pending.append(rest);
    }
    return length - idle;
  }

  /** Bytes buffered for an incomplete message (nonzero at end of stream means a truncated message). */
  get bufferedBytes(): number {
    return this.pending.length;
  }

  private emit(chunk: Buffer, start: number, end: number): void {
    if (this.pending.length + end - start > this.maxMessageBytes) {
      throw new OvsdbMessageSizeError(this.maxMessageBytes, this.pending.length + end - start);
    }
    const bytes = this.pending.take(chunk.subarray(start, end));
    if (bytes.length > LARGE_MESSAGE_BYTES) {
      this.onMessage(parseLargeJson(bytes));
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(bytes.toString('utf8'));
    } catch (error) {
      throw new OvsdbProtocolError('The server sent a message that is not valid JSON; check that the remote is an OVSDB server.', {
        cause: error,
      });
    }
    this.onMessage(message);
  }

  private garbage(what: string): OvsdbProtocolError {
    return new OvsdbProtocolError(`The server sent ${what}; check that the remote is an OVSDB server (JSON-RPC over RFC 7047).`);
  }
}
