// The text golden corpus: the packet description of every input of the packet golden corpus
// (test/packet/packet-golden.ts) and the text line of every sample golden message
// (test/output/sample-json-golden.ts) with every golden event, as recorded from the TypeScript
// builders the native ones replaced (native/packet/packet_text.cc, native/render/sample_text.cc).
// TEXT_GOLDEN=write records them again from the current implementation (review the diff: every
// changed line is a changed output).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

import { formatSample } from '../../src/output/sample-lines';
import { encodePsample } from '../../src/index';
import { RECORD } from '../../src/native/abi.generated';
import { NATIVE_LITTLE_ENDIAN } from '../../src/native/binding';
import { describePacket } from '../../src/packet/index';
import { PsampleBatch } from '../../src/psample/batch';
import type { PsampleSample } from '../../src/psample/sample';
import { SampleLines } from '../../src/output/sample-lines';
import { goldenInputs } from '../packet/packet-golden';
import { goldenEvents, goldenMessages, goldenSamples } from './sample-json-golden';

const PACKET_GOLDEN = join(__dirname, '..', 'fixtures', 'packet-text', 'golden.tsv.gz');
const SAMPLE_GOLDEN = join(__dirname, '..', 'fixtures', 'sample-text', 'golden.tsv');

const describeBytes = (bytes: Uint8Array, proto: number): string => describePacket(bytes, proto);

const rows = (text: string): string[][] =>
  text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.split('\t'));

// The JSON corpus's messages, and the shapes only the text line tells apart.
const messages = [
  ...goldenMessages(),
  { name: 'get-group-no-refcount', datagram: encodePsample({ command: 'get-group', group: 11 }) },
  { name: 'four-byte-cookie', datagram: encodePsample({ group: 5, oifindex: 0, userCookie: Uint8Array.of(0, 0, 0, 1) }) },
];

/** The messages' samples; the group event without a refcount loses its GROUP_REFCOUNT (encodePsample always writes one). */
function samples(): PsampleSample[] {
  const all = goldenSamples(messages);
  const { buffer, at } = all[messages.findIndex((m) => m.name === 'get-group-no-refcount')]!.record();
  const view = new DataView(buffer);
  view.setUint32(at + RECORD.present, view.getUint32(at + RECORD.present, NATIVE_LITTLE_ENDIAN) & ~(1 << 7), NATIVE_LITTLE_ENDIAN);
  return all;
}

if (process.env.TEXT_GOLDEN === 'write') {
  const packets = goldenInputs().map(({ name, proto, bytes }) => `${name}\t${describeBytes(bytes, proto)}\n`);
  writeFileSync(PACKET_GOLDEN, gzipSync(packets.join(''), { level: 9 }));
  // A line is kept as a JSON string: an event's message may hold a tab.
  const lines = samples().flatMap((sample, i) =>
    goldenEvents.map((event, e) => `${messages[i]!.name}\t${e}\t${JSON.stringify(formatSample(sample, 'text', event))}\n`),
  );
  writeFileSync(SAMPLE_GOLDEN, lines.join(''));
}

describe('packet description golden corpus', () => {
  const golden = rows(gunzipSync(readFileSync(PACKET_GOLDEN)).toString('utf8'));

  it('describes every input of the packet corpus as recorded', () => {
    const inputs = goldenInputs();
    expect(golden.map(([name]) => name)).toEqual(inputs.map((input) => input.name));
    golden.forEach(([name, text], i) => expect(describeBytes(inputs[i]!.bytes, inputs[i]!.proto), name).toBe(text));
  });

  it('throws a TypeError for data that is no Uint8Array or a proto outside 0-65535', () => {
    const describeAny = describePacket as (data: unknown, proto: unknown) => string;
    for (const [data, proto] of [
      ['45', 0x0800],
      [new Uint16Array(4), 0x0800],
      [new Uint8Array(4), -1],
      [new Uint8Array(4), 0x10000],
      [new Uint8Array(4), 1.5],
      [new Uint8Array(4), '2048'],
    ]) {
      expect(() => describeAny(data, proto)).toThrow(TypeError);
    }
  });
});

describe('sample text golden lines', () => {
  const golden = rows(readFileSync(SAMPLE_GOLDEN, 'utf8')).map(([name, event, line]) => ({
    name: name!,
    event: Number(event),
    line: JSON.parse(line!) as string,
  }));

  it('writes each message with every event as recorded', () => {
    expect(golden.map((g) => `${g.name}/${g.event}`)).toEqual(messages.flatMap((m) => goldenEvents.map((_, e) => `${m.name}/${e}`)));
    const all = samples();
    golden.forEach(({ name, event, line }, i) => {
      const sample = all[Math.floor(i / goldenEvents.length)]!;
      // Compared as the UTF-8 the output writes: a lone surrogate in a message is U+FFFD there.
      expect(Buffer.from(formatSample(sample, 'text', goldenEvents[event])).toString(), `${name}/${event}`).toBe(
        Buffer.from(line).toString(),
      );
    });
  });

  it("an event's line breaks and escape sequences are written as escapes: a database name cannot forge a line or drive the terminal", () => {
    const sample = samples()[0]!;
    const event = { ...goldenEvents[1]!, message: 'Allowed by network policy "a\nforged line" \u001b[31mred\u001b[0m\r\tend\u007f' };
    const line = formatSample(sample, 'text', event);
    expect(line).not.toMatch(/[\n\r\u001b\u007f]/);
    expect(line).toMatch(/ \| Allowed by network policy "a\\nforged line" \\x1b\[31mred\\x1b\[0m\\r\tend\\x7f$/);
  });

  it('writes a batch as the recorded lines of its samples, group events left out', () => {
    const all = samples();
    const batch = new PsampleBatch(all[0]!.record().buffer, all.length, NATIVE_LITTLE_ENDIAN);
    const groupEvents = new Set(all.flatMap((sample, i) => (sample.command === 'sample' ? [] : [messages[i]!.name])));
    for (let e = 0; e < goldenEvents.length; e++) {
      const event = goldenEvents[e];
      const lines = new SampleLines(
        'text',
        event === undefined ? undefined : { decodeSample: () => event, holds: () => true, on: () => undefined, off: () => undefined },
      );
      const { bytes, lines: count } = lines.write(batch);
      const expected = golden.filter((g) => g.event === e && !groupEvents.has(g.name)).map((g) => `${g.line}\n`);
      expect(count).toBe(expected.length);
      expect(bytes.toString()).toBe(Buffer.from(expected.join('')).toString());
    }
  });
});
