import { OvsdbProtocolError } from '../errors';
import { OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET, QUOTE, BACKSLASH, COMMA, COLON, isJsonWhitespace } from './json-bytes';

/** Containers smaller than this are handed to JSON.parse whole. */
const SMALL_CONTAINER_BYTES = 64 * 1024;
/** Objects with more members than this stay lazy: a table's rows in a monitor reply. */
const LAZY_OBJECT_MEMBERS = 256;

/**
 * A JSON object too big to materialize at once (the rows of one table in a monitor reply, which
 * can be hundreds of MB): members are parsed one at a time while iterating, so only the raw bytes
 * and one member's tree are alive, not the whole tree.
 */
export class LazyJsonObject {
  constructor(
    private readonly bytes: Buffer,
    private readonly keys: readonly string[],
    private readonly starts: Int32Array,
    private readonly ends: Int32Array,
  ) {}

  get size(): number {
    return this.keys.length;
  }

  /** Each member's name with a reader of its value, so one bad value costs that member, not the rest. */
  *members(): IterableIterator<JsonMember> {
    for (let i = 0; i < this.keys.length; i++) {
      yield [this.keys[i]!, () => parseJson(this.bytes, this.starts[i]!, this.ends[i]!)];
    }
  }
}

/** A member's name and a reader of its value; the reader throws OvsdbProtocolError when the value is not valid JSON. */
export type JsonMember = readonly [name: string, read: () => unknown];

/** Members of a parsed JSON object, whether plain or lazy. */
export function objectMembers(json: object): Iterable<JsonMember> {
  return json instanceof LazyJsonObject ? json.members() : plainMembers(json as Record<string, unknown>);
}

function* plainMembers(json: Record<string, unknown>): IterableIterator<JsonMember> {
  for (const name of Object.keys(json)) {
    yield [name, () => json[name]];
  }
}

/** Member count of a parsed JSON object, whether plain or lazy. */
export function objectSize(json: object): number {
  return json instanceof LazyJsonObject ? json.size : Object.keys(json).length;
}

/**
 * Parses one complete JSON text like JSON.parse, except that objects with many members become
 * LazyJsonObjects. Used for large messages, so the text is never turned into one giant string.
 */
export function parseLargeJson(bytes: Buffer): unknown {
  return new SkeletonParser(bytes).value(skipWhitespace(bytes, 0));
}

function skipWhitespace(bytes: Buffer, pos: number): number {
  let i = pos;
  while (i < bytes.length && isJsonWhitespace(bytes[i]!)) {
    i++;
  }
  return i;
}

function parseJson(bytes: Buffer, start: number, end: number): unknown {
  try {
    return JSON.parse(bytes.toString('utf8', start, end));
  } catch (error) {
    throw new OvsdbProtocolError('The server sent a message that is not valid JSON; check that the remote is an OVSDB server.', {
      cause: error,
    });
  }
}

class SkeletonParser {
  constructor(private readonly bytes: Buffer) {}

  /** The value starting at `start` (no leading whitespace). */
  value(start: number): unknown {
    const first = this.bytes[start];
    if (first === OPEN_BRACE) {
      return this.object(start);
    }
    if (first === OPEN_BRACKET) {
      return this.array(start);
    }
    return this.parseSlice(start, this.skipValue(start));
  }

  private object(start: number): unknown {
    const keys: string[] = [];
    const starts: number[] = [];
    const ends: number[] = [];
    let pos = skipWhitespace(this.bytes, start + 1);
    if (this.bytes[pos] !== CLOSE_BRACE) {
      for (;;) {
        if (this.bytes[pos] !== QUOTE) {
          throw malformed('an object member name');
        }
        const keyEnd = this.skipString(pos);
        keys.push(this.parseSlice(pos, keyEnd) as string);
        pos = skipWhitespace(this.bytes, keyEnd);
        if (this.bytes[pos] !== COLON) {
          throw malformed('":" after a member name');
        }
        const valueStart = skipWhitespace(this.bytes, pos + 1);
        const valueEnd = this.skipValue(valueStart);
        starts.push(valueStart);
        ends.push(valueEnd);
        pos = skipWhitespace(this.bytes, valueEnd);
        if (this.bytes[pos] === COMMA) {
          pos = skipWhitespace(this.bytes, pos + 1);
        } else if (this.bytes[pos] === CLOSE_BRACE) {
          break;
        } else {
          throw malformed('"," or "}" in an object');
        }
      }
    }
    if (keys.length > LAZY_OBJECT_MEMBERS) {
      return new LazyJsonObject(this.bytes, keys, Int32Array.from(starts), Int32Array.from(ends));
    }
    const object: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const value = this.member(starts[i]!, ends[i]!);
      if (key === '__proto__') {
        // As JSON.parse does: an own member, not the object's prototype (which a server could set).
        Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
      } else {
        object[key] = value;
      }
    }
    return object;
  }

  private array(start: number): unknown[] {
    const elements: unknown[] = [];
    let pos = skipWhitespace(this.bytes, start + 1);
    if (this.bytes[pos] === CLOSE_BRACKET) {
      return elements;
    }
    for (;;) {
      const end = this.skipValue(pos);
      elements.push(this.member(pos, end));
      pos = skipWhitespace(this.bytes, end);
      if (this.bytes[pos] === COMMA) {
        pos = skipWhitespace(this.bytes, pos + 1);
      } else if (this.bytes[pos] === CLOSE_BRACKET) {
        return elements;
      } else {
        throw malformed('"," or "]" in an array');
      }
    }
  }

  private member(start: number, end: number): unknown {
    return end - start > SMALL_CONTAINER_BYTES ? this.value(start) : this.parseSlice(start, end);
  }

  private parseSlice(start: number, end: number): unknown {
    return parseJson(this.bytes, start, end);
  }

  /** The end (exclusive) of the value starting at `start`. */
  private skipValue(start: number): number {
    const bytes = this.bytes;
    const first = bytes[start];
    if (first === QUOTE) {
      return this.skipString(start);
    }
    if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
      let i = start;
      while (i < bytes.length) {
        const byte = bytes[i]!;
        if (byte === COMMA || byte === CLOSE_BRACE || byte === CLOSE_BRACKET || isJsonWhitespace(byte)) {
          break;
        }
        i++;
      }
      if (i === start) {
        throw malformed('a value');
      }
      return i;
    }
    let depth = 0;
    for (let i = start; i < bytes.length; i++) {
      const byte = bytes[i]!;
      if (byte === QUOTE) {
        i = this.skipString(i) - 1;
      } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
        depth++;
      } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
        depth--;
        if (depth === 0) {
          return i + 1;
        }
      }
    }
    throw malformed('the end of a container');
  }

  /** The end (exclusive, after the closing quote) of the string starting at `start`. */
  private skipString(start: number): number {
    const bytes = this.bytes;
    let i = start + 1;
    for (;;) {
      const quote = bytes.indexOf(QUOTE, i);
      if (quote < 0) {
        throw malformed('the end of a string');
      }
      let backslashes = 0;
      for (let j = quote - 1; j >= i && bytes[j] === BACKSLASH; j--) {
        backslashes++;
      }
      if (backslashes % 2 === 0) {
        return quote + 1;
      }
      i = quote + 1;
    }
  }
}

function malformed(expected: string): OvsdbProtocolError {
  return new OvsdbProtocolError(`The server sent malformed JSON (expected ${expected}); check that the remote is an OVSDB server.`);
}
