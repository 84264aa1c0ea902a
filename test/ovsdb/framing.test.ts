import { describe, expect, it } from 'vitest';
import { OvsdbMessageSizeError, OvsdbProtocolError } from '../../src/errors';
import { JsonStreamFramer } from '../../src/ovsdb/framing';

const MESSAGES: unknown[] = [
  { id: 1, result: [{ rows: [{ match: 'ip4.src == "10.0.0.1" && tcp.dst == 80', name: 'np\\ns:web\\' }] }], error: null },
  { method: 'update3', params: ['m', '00000000-0000-0000-0000-000000000000', { ACL: { a: { delete: null } } }], id: null },
  { id: 'echo', result: [], error: null },
  ['weird', 'but', { valid: '}{][' }],
  { name: 'Ünïcødé 🚦 ポリシー', escapes: '\\"\u0001\n\t}' },
];
const STREAM = Buffer.from(MESSAGES.map((message, i) => JSON.stringify(message, null, i % 2 === 0 ? undefined : 2)).join(' \n'), 'utf8');

function frame(chunks: Buffer[]): unknown[] {
  const out: unknown[] = [];
  const framer = new JsonStreamFramer((message) => out.push(message));
  for (const chunk of chunks) {
    framer.push(chunk);
  }
  expect(framer.bufferedBytes).toBe(0);
  return out;
}

describe('JsonStreamFramer', () => {
  it('splits back-to-back objects at every possible cut, including inside UTF-8 sequences and escapes', () => {
    for (let cut = 0; cut <= STREAM.length; cut++) {
      expect(frame([STREAM.subarray(0, cut), STREAM.subarray(cut)])).toEqual(MESSAGES);
    }
  });

  it('handles one byte at a time', () => {
    expect(frame([...STREAM].map((byte) => Buffer.from([byte])))).toEqual(MESSAGES);
  });

  it('carries an escape whose backslash ends a chunk', () => {
    const text = Buffer.from('{"a":"x\\\\\\"}"}{"b":1}');
    for (let cut = 1; cut < text.length; cut++) {
      expect(frame([text.subarray(0, cut), text.subarray(cut)])).toEqual([{ a: 'x\\"}' }, { b: 1 }]);
    }
  });

  it('keeps an incomplete message until the rest arrives', () => {
    const out: unknown[] = [];
    const framer = new JsonStreamFramer((message) => out.push(message));
    framer.push(Buffer.from('{"id":1,"result":["abc'));
    expect(out).toEqual([]);
    expect(framer.bufferedBytes).toBeGreaterThan(0);
    framer.push(Buffer.from('"]}'));
    expect(out).toEqual([{ id: 1, result: ['abc'] }]);
  });

  it.each([
    ['bytes outside an object', 'HTTP/1.1 400\r\n'],
    ['a top-level string', '"x"'],
    ['an unbalanced close', '{}}'],
    ['invalid JSON inside balanced brackets', '{"a" 1}'],
  ])('rejects %s with a typed error', (_what, text) => {
    const framer = new JsonStreamFramer(() => undefined);
    expect(() => framer.push(Buffer.from(text))).toThrow(OvsdbProtocolError);
  });

  it('refuses a message larger than the limit before buffering all of it', () => {
    const framer = new JsonStreamFramer(() => undefined, 64);
    framer.push(Buffer.from('{"a":"'));
    expect(() => framer.push(Buffer.alloc(100, 0x61))).toThrow(OvsdbMessageSizeError);
    expect(framer.bufferedBytes).toBeLessThanOrEqual(64);
    // A whole message over the limit in one chunk is refused too.
    expect(() => new JsonStreamFramer(() => undefined, 64).push(Buffer.from(JSON.stringify({ a: 'a'.repeat(100) })))).toThrow(
      /more than 64 bytes/,
    );
  });

  it('counts only the bytes of messages as received: whitespace between them is no sign of life', () => {
    const framer = new JsonStreamFramer(() => undefined);
    expect(framer.push(Buffer.from(' \n\t\r '))).toBe(0);
    expect(framer.push(Buffer.from('  {"a": 1}  '))).toBe(8);
    expect(framer.push(Buffer.from('[1,'))).toBe(3);
    expect(framer.push(Buffer.from(' 2 ]'))).toBe(4);
  });
});
