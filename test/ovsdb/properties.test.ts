import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OvsdbMessageSizeError, OvsdbProtocolError, OvsdbRemoteError } from '../../src/errors';
import { JsonStreamFramer } from '../../src/ovsdb/framing';
import { parseLargeJson } from '../../src/ovsdb/lazy-json';
import { formatRemote, parseRemotes, type Remote } from '../../src/ovsdb/remote';
import { materialize } from './json-helpers';

/** JSON.parse's idea of a value: what survives a round trip through text (-0 becomes 0). */
function viaText(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}

/** Splits `bytes` at the given fractions of its length. */
function cut(bytes: Buffer, fractions: readonly number[]): Buffer[] {
  const points = [...new Set(fractions.map((fraction) => Math.floor(fraction * bytes.length)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const point of points) {
    chunks.push(bytes.subarray(from, point));
    from = point;
  }
  chunks.push(bytes.subarray(from));
  return chunks;
}

/** Top-level JSON-RPC texts are objects (or arrays); their members anything JSON holds, unicode included. */
const message = fc.oneof(fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue()), fc.array(fc.jsonValue()));
const whitespace = fc.stringMatching(/^[ \t\r\n]{0,4}$/);
const cuts = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 });

/** A member list past LAZY_OBJECT_MEMBERS (256), so parseLargeJson keeps it lazy. */
const bigObject = fc
  .array(fc.tuple(fc.string({ unit: 'binary' }), fc.jsonValue({ maxDepth: 2 })), { minLength: 257, maxLength: 300 })
  .map((pairs) => Object.fromEntries(pairs));

describe('JsonStreamFramer (property-based)', () => {
  it('yields exactly the messages written back to back, wherever the stream is cut', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(message, whitespace), { maxLength: 8 }), whitespace, cuts, (messages, lead, fractions) => {
        const text = lead + messages.map(([value, gap]) => JSON.stringify(value) + gap).join('');
        const out: unknown[] = [];
        const framer = new JsonStreamFramer((parsed) => out.push(parsed));
        for (const chunk of cut(Buffer.from(text, 'utf8'), fractions)) {
          framer.push(chunk);
        }
        expect(out).toEqual(messages.map(([value]) => viaText(value)));
        expect(framer.bufferedBytes).toBe(0);
      }),
    );
  });

  it('never throws anything but its typed errors on arbitrary bytes, and never holds more than its limit', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), cuts, fc.integer({ min: 1, max: 256 }), (bytes, fractions, limit) => {
        const framer = new JsonStreamFramer(() => undefined, limit);
        try {
          for (const chunk of cut(Buffer.from(bytes), fractions)) {
            framer.push(chunk);
            expect(framer.bufferedBytes).toBeLessThanOrEqual(limit);
          }
        } catch (error) {
          expect(error instanceof OvsdbProtocolError || error instanceof OvsdbMessageSizeError, String(error)).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('never throws anything but its typed errors on JSON-looking noise', () => {
    const noise = fc
      .array(fc.constantFrom('{', '}', '[', ']', '"', '\\', ':', ',', 'a', '1', ' ', 'é', '\u0000'), { maxLength: 64 })
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(noise, cuts, (text, fractions) => {
        const framer = new JsonStreamFramer(() => undefined);
        try {
          for (const chunk of cut(Buffer.from(text, 'utf8'), fractions)) {
            framer.push(chunk);
          }
        } catch (error) {
          expect(error, String(error)).toBeInstanceOf(OvsdbProtocolError);
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe('parseLargeJson (property-based)', () => {
  it('reads what JSON.parse reads, big member lists left lazy', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), bigObject, fc.dictionary(fc.string(), bigObject, { maxKeys: 2 })), (value) => {
        const parsed = parseLargeJson(Buffer.from(JSON.stringify(value), 'utf8'));
        expect(materialize(parsed)).toEqual(viaText(value));
      }),
      // The case a first run found: a member named __proto__ must stay a member, as JSON.parse keeps it.
      { numRuns: 200, examples: [[JSON.parse('{"":{},"__proto__":null}') as never]] },
    );
  });

  it('throws only OvsdbProtocolError on arbitrary text, including when a lazy member is read', () => {
    const noise = fc
      .array(fc.constantFrom('{', '}', '[', ']', '"', '\\', ':', ',', 'a', '1', '-', 'e', '.', ' ', 'true', 'null', '"k":'), {
        maxLength: 64,
      })
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(fc.oneof(noise, fc.string({ unit: 'binary', maxLength: 64 })), (text) => {
        try {
          materialize(parseLargeJson(Buffer.from(text, 'utf8')));
        } catch (error) {
          expect(error, String(error)).toBeInstanceOf(OvsdbProtocolError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

const port = fc.integer({ min: 1, max: 65535 });
const remote: fc.Arbitrary<Remote> = fc.oneof(
  fc
    .string({ unit: 'binary', minLength: 1, maxLength: 40 })
    .filter((path) => !path.includes(',') && path.trim() === path && path !== '')
    .map((path) => ({ kind: 'unix' as const, path })),
  fc.record({
    kind: fc.constantFrom('tcp' as const, 'ssl' as const),
    host: fc.oneof(fc.ipV4(), fc.ipV6(), fc.domain()),
    port,
  }),
);

describe('parseRemotes (property-based)', () => {
  it('reads back what formatRemote writes, one remote or a comma-separated cluster', () => {
    fc.assert(
      fc.property(fc.array(remote, { minLength: 1, maxLength: 5 }), (remotes) => {
        const normalized = remotes.map((each) => (each.kind === 'unix' ? each : { ...each, host: each.host.replace(/^\[|\]$/g, '') }));
        expect(parseRemotes(normalized.map(formatRemote).join(','))).toEqual(normalized);
        expect(parseRemotes(normalized.map(formatRemote))).toEqual(normalized);
      }),
    );
  });

  it('returns remotes or throws OvsdbRemoteError, on any input', () => {
    const remoteLike = fc
      .tuple(
        fc.constantFrom('unix:', 'tcp:', 'ssl:', 'punix:', 'ptcp:', 'http:', '', 'tcp:[', 'ssl:['),
        fc.string({ unit: 'binary', maxLength: 30 }),
      )
      .map(([method, rest]) => method + rest);
    fc.assert(
      fc.property(fc.oneof(remoteLike, fc.string({ unit: 'binary' }), fc.array(remoteLike, { maxLength: 4 })), (input) => {
        try {
          const parsed = parseRemotes(input);
          expect(parsed.length).toBeGreaterThan(0);
          for (const each of parsed) {
            if (each.kind !== 'unix') {
              expect(Number.isInteger(each.port) && each.port >= 1 && each.port <= 65535).toBe(true);
            }
          }
        } catch (error) {
          expect(error, String(error)).toBeInstanceOf(OvsdbRemoteError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
