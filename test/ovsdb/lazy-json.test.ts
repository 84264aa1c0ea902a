import { describe, expect, it } from 'vitest';
import { OvsdbProtocolError } from '../../src/errors';
import { LazyJsonObject, objectSize, parseLargeJson } from '../../src/ovsdb/lazy-json';
import { materialize } from './json-helpers';

function bigMonitorReply(rows: number): unknown {
  const acl: Record<string, unknown> = {};
  for (let i = 0; i < rows; i++) {
    acl[`${String(i).padStart(8, '0')}-0000-0000-0000-000000000000`] = {
      initial: {
        match: `ip4.src == "10.0.${i >> 8}.${i & 255}" && ✓ \\ "quoted" ${'x'.repeat(i % 50)}`,
        priority: i,
        sample_new: ['uuid', 'a'],
        n: [1.5e3, -0, true, null],
      },
    };
  }
  return {
    id: 7,
    result: [false, '00000000-0000-0000-0000-000000000000', { ACL: acl, Sample: { s: { initial: { metadata: 1 } } } }],
    error: null,
  };
}

describe('parseLargeJson', () => {
  it('yields what JSON.parse yields, with big member lists left lazy', () => {
    const message = bigMonitorReply(5000);
    const bytes = Buffer.from(JSON.stringify(message));
    const parsed = parseLargeJson(bytes) as { result: [boolean, string, { ACL: unknown; Sample: unknown }] };
    expect(parsed.result[2].ACL).toBeInstanceOf(LazyJsonObject);
    expect(objectSize(parsed.result[2].ACL as object)).toBe(5000);
    expect(parsed.result[2].Sample).toEqual({ s: { initial: { metadata: 1 } } });
    expect(materialize(parsed)).toEqual(JSON.parse(bytes.toString()));
  });

  it('parses pretty-printed text and scalars the same way', () => {
    for (const value of [bigMonitorReply(300), [1, 'two', { three: [3] }, null, false], 'just a string', 12.5]) {
      const text = JSON.stringify(value, null, 2);
      expect(materialize(parseLargeJson(Buffer.from(text)))).toEqual(JSON.parse(text));
    }
  });

  it('rejects malformed text with a typed error', () => {
    for (const text of ['{"a" 1}', '{"a":1 "b":2}', '[1 2]', '{"a":"unterminated}', '{1:2}']) {
      expect(() => materialize(parseLargeJson(Buffer.from(text)))).toThrow(OvsdbProtocolError);
    }
  });
});
