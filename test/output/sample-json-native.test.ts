// The sample JSON line is rendered natively (native/render/sample_json.h). Its golden lines
// (test/fixtures/sample-json/golden.tsv) were recorded from the TypeScript line builders it
// replaced; SAMPLE_JSON_GOLDEN=write records them again from the renderer (review the diff:
// every changed line is a changed output).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { encodePsample } from '../../src/index';
import { RECORD } from '../../src/native/abi.generated';
import { addon, NATIVE_LITTLE_ENDIAN } from '../../src/native/binding';
import { fromNativeError, InvalidOptionError } from '../../src/psample/errors';
import { PsampleBatch } from '../../src/psample/batch';
import { sampleJson } from '../../src/output/sample-json';
import { sampleText } from '../../src/output/sample-text';
import { SampleLines } from '../../src/output/sample-lines';
import { goldenBatch, goldenEvents, goldenMessages, goldenSamples } from './sample-json-golden';

const GOLDEN = join(__dirname, '..', 'fixtures', 'sample-json', 'golden.tsv');

interface GoldenLine {
  name: string;
  event: number;
  line: string;
}

function readGolden(): GoldenLine[] {
  return readFileSync(GOLDEN, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [name, event, json] = line.split('\t') as [string, string, string];
      return { name, event: Number(event), line: json };
    });
}

const messages = goldenMessages();

if (process.env.SAMPLE_JSON_GOLDEN === 'write') {
  const samples = goldenSamples(messages);
  const lines = samples.flatMap((sample, i) =>
    goldenEvents.map((event, e) => `${messages[i]!.name}\t${e}\t${sampleJson(sample, event)}\n`),
  );
  writeFileSync(GOLDEN, lines.join(''));
}

describe('sample JSON golden lines', () => {
  const golden = readGolden();

  it('holds a line for every message with every event', () => {
    expect(golden.map((g) => `${g.name}/${g.event}`)).toEqual(messages.flatMap((m) => goldenEvents.map((_, e) => `${m.name}/${e}`)));
  });

  it('renders each line as recorded, and each is one JSON object', () => {
    const samples = goldenSamples(messages);
    golden.forEach(({ event, line }, i) => {
      const sample = samples[Math.floor(i / goldenEvents.length)]!;
      expect(sampleJson(sample, goldenEvents[event])).toBe(line);
      expect(JSON.parse(line)).toBeTypeOf('object');
    });
  });

  it('writes a batch as the recorded lines of its samples, group events left out', () => {
    const batch = goldenBatch(messages);
    for (let e = 0; e < goldenEvents.length; e++) {
      const event = goldenEvents[e];
      const lines = new SampleLines(
        'json',
        event === undefined ? undefined : { decodeSample: () => event, holds: () => true, on: () => undefined, off: () => undefined },
      );
      const { bytes, lines: count } = lines.write(batch);
      const expected = golden.filter((g) => g.event === e && !g.name.endsWith('-group')).map((g) => `${g.line}\n`);
      expect(count).toBe(expected.length);
      expect(bytes.toString()).toBe(expected.join(''));
    }
  });
});

describe('LineRenderer construction', () => {
  it('takes the format, json or text, or throws a typed error', () => {
    const LineRenderer = addon.LineRenderer as unknown as new (format?: unknown) => unknown;
    for (const format of [undefined, 'xml', 'JSON', 1, {}]) {
      expect(() => new LineRenderer(format)).toThrow(TypeError);
      try {
        new LineRenderer(format);
      } catch (error) {
        expect(fromNativeError(error)).toBeInstanceOf(InvalidOptionError);
      }
    }
  });
});

// The renderer's N-API face in each format, called the wrong way and handed batches whose records lie.
describe.each(['json', 'text'] as const)('LineRenderer(%s) at its boundary', (format) => {
  const { stop: STOP, flag: FLAG, state: STATE } = addon.LineRenderer;
  const host = NATIVE_LITTLE_ENDIAN ? FLAG.littleEndian : 0;
  const out = Buffer.alloc(64 * 1024);
  const state = new Float64Array(STATE.length);
  const batch = goldenBatch(messages);

  it('throws a typed error for every argument of the wrong type or out of range', () => {
    const renderer = new addon.LineRenderer(format);
    const json = Buffer.from('{}');
    const buffer = batch.buffer;
    const calls: (() => unknown)[] = [
      () => renderer.setEvent('1' as unknown as number, 2, json),
      () => renderer.setEvent(-1, 2, json),
      () => renderer.setEvent(2 ** 32, 2, json),
      () => renderer.setEvent(1, 2, '{}' as unknown as Uint8Array),
      () => renderer.setEvent(1, 2, new Uint16Array(2) as unknown as Uint8Array),
      () => renderer.setEventForCookieLength(1.5, json),
      () => renderer.render(new Uint8Array(buffer) as unknown as ArrayBuffer, batch.length, 0, 0, host, Infinity, out, 0, state),
      () => renderer.render(buffer, -1, 0, 0, host, Infinity, out, 0, state),
      () => renderer.render(buffer, batch.length, 0, buffer.byteLength + 1, host, Infinity, out, 0, state),
      () => renderer.render(buffer, batch.length, 0, 0, host, Number.NaN, out, 0, state),
      () => renderer.render(buffer, batch.length, 0, 0, host, Infinity, out.buffer as unknown as Uint8Array, 0, state),
      () => renderer.render(buffer, batch.length, 0, 0, host, Infinity, out, out.length + 1, state),
      () => renderer.render(buffer, batch.length, 0, 0, host, Infinity, out, 0, new Float64Array(STATE.length - 1)),
      () => renderer.render(buffer, batch.length, 0, 0, host, Infinity, out, 0, new Float32Array(STATE.length) as unknown as Float64Array),
      () => renderer.line(buffer, -8, NATIVE_LITTLE_ENDIAN),
      () => renderer.line(buffer, 0, 1 as unknown as boolean),
      () => renderer.line(buffer, 0, NATIVE_LITTLE_ENDIAN, 'event' as unknown as Uint8Array),
    ];
    for (const call of calls) {
      expect(call).toThrow(TypeError);
      try {
        call();
      } catch (error) {
        expect(fromNativeError(error)).toBeInstanceOf(InvalidOptionError);
      }
    }
  });

  /** The golden batch with one number of its first record replaced. */
  function lying(field: number, value: number, count = batch.length): { buffer: ArrayBuffer; count: number } {
    const buffer = batch.buffer.slice(0);
    new DataView(buffer).setUint32(field, value, NATIVE_LITTLE_ENDIAN);
    return { buffer, count };
  }
  const tunnelRecord = (): number => {
    let at = 0;
    for (const sample of batch) {
      if (sample.tunnel !== undefined) return sample.record().at;
      at = sample.record().at;
    }
    throw new Error(`no tunnel after ${at}`);
  };

  it.each([
    ['a length shorter than a record', () => lying(RECORD.length, 8)],
    ['a length past the batch', () => lying(RECORD.length, 0xfffffff8)],
    ['packet bytes past the batch', () => lying(RECORD.dataLength, 0xffffffff)],
    ['a packet offset past the batch', () => lying(RECORD.dataOffset, 0xfffffff0)],
    ['a cookie past the batch', () => lying(RECORD.cookieOffset, batch.buffer.byteLength)],
    ['a tunnel block past the batch', () => lying(tunnelRecord() + RECORD.tunnelOffset, batch.buffer.byteLength - tunnelRecord() - 8)],
    ['more records than the batch holds', () => ({ buffer: batch.buffer, count: batch.length + 1 })],
  ])('stops at a record with %s, reading nothing outside the batch', (_, make) => {
    const { buffer, count } = make();
    const renderer = new addon.LineRenderer(format);
    let index = 0;
    let offset = 0;
    let stop: number;
    // The walk renders what it can read and stops, saying where, at what it cannot.
    do {
      stop = renderer.render(buffer, count, index, offset, host, Infinity, out, 0, state);
      index = state[STATE.nextIndex]!;
      offset = state[STATE.nextOffset]!;
    } while (stop === STOP.noRoom && index < count);
    expect(stop).toBe(STOP.malformed);
    expect(index).toBeLessThan(count);
    const lie = new PsampleBatch(buffer, count, NATIVE_LITTLE_ENDIAN);
    expect(() => new SampleLines(format).write(lie)).toThrow(RangeError);
    expect(() => renderer.line(buffer, Math.min(offset, buffer.byteLength), NATIVE_LITTLE_ENDIAN)).toThrow(RangeError);
  });

  it('never reads outside a batch whatever its bytes say: each line it writes is JSON (text: printable ASCII), or it stops at the lying record', () => {
    const renderer = new addon.LineRenderer(format);
    renderer.setEventForCookieLength(16, Buffer.from(format === 'json' ? '{"e":1}' : ' | e'));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(batch.buffer.byteLength - 1), fc.nat(255)), { minLength: 1, maxLength: 16 }),
        fc.nat(batch.length + 2),
        (changes, count) => {
          const bytes = new Uint8Array(batch.buffer.slice(0));
          for (const [at, value] of changes) bytes[at] = value;
          const stop = renderer.render(bytes.buffer, count, 0, 0, host | FLAG.samplesOnly, Infinity, out, 0, state);
          expect([STOP.end, STOP.malformed, STOP.missingEvent]).toContain(stop);
          const text = out.subarray(0, state[STATE.outEnd]).toString();
          const lines = text.split('\n').slice(0, -1);
          expect(lines.length).toBe(state[STATE.lines]);
          for (const line of lines) {
            if (format === 'json') JSON.parse(line);
            else expect(line).toMatch(/^[\x20-\x7e]+$/);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('answers from the event table as it is at each render: cleared, it stops at the first sample that needs one', () => {
    const cookie = Uint8Array.of(0x2b, 0, 0, 3, 0, 0, 3, 0xf4);
    const twice = goldenBatch([
      { name: 'a', datagram: encodePsample({ group: 1, userCookie: cookie }) },
      { name: 'b', datagram: encodePsample({ group: 2, userCookie: cookie }) },
    ]);
    const renderer = new addon.LineRenderer(format);
    const render = (): number => renderer.render(twice.buffer, twice.length, 0, 0, host | FLAG.withEvents, Infinity, out, 0, state);
    // The event as the format writes it, and how it ends a line.
    const event = (n: number): Buffer => Buffer.from(format === 'json' ? `{"n":${n}}` : ` | n=${n}`);
    const ending = (n: number): RegExp =>
      format === 'json' ? new RegExp(`"event":\\{"n":${n}\\}\\}\n`, 'g') : new RegExp(` \\| n=${n}\n`, 'g');
    renderer.setEvent(0x2b000003, 1012, event(1));
    expect(render()).toBe(STOP.end);
    expect(state[STATE.lines]).toBe(2);
    expect(out.subarray(0, state[STATE.outEnd]).toString().match(ending(1))).toHaveLength(2);
    renderer.clearEvents();
    expect(render()).toBe(STOP.missingEvent);
    expect([state[STATE.nextIndex], state[STATE.nextOffset], state[STATE.lines], state[STATE.outEnd]]).toEqual([0, 0, 0, 0]);
    renderer.setEvent(0x2b000003, 1012, event(2));
    expect(render()).toBe(STOP.end);
    expect(out.subarray(0, state[STATE.outEnd]).toString().match(ending(2))).toHaveLength(2);
  });

  it('stops when out of room, writing only whole lines and saying how much the next one needs', () => {
    const renderer = new addon.LineRenderer(format);
    const line = format === 'json' ? sampleJson : sampleText;
    const first = Buffer.byteLength(line(batch.at(0)!)) + 1;
    const small = Buffer.alloc(first + 10);
    expect(renderer.render(batch.buffer, batch.length, 0, 0, host, Infinity, small, 0, state)).toBe(STOP.noRoom);
    expect([state[STATE.nextIndex], state[STATE.lines], state[STATE.outEnd]]).toEqual([1, 1, first]);
    expect(state[STATE.needed]).toBe(Buffer.byteLength(line(batch.at(1)!)) + 1);
  });
});
