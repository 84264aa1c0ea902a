// The sample JSON line is rendered natively (native/sample_json.h). Its golden lines
// (test/fixtures/sample-json/golden.tsv) were recorded from the TypeScript line builders it
// replaced; SAMPLE_JSON_GOLDEN=write records them again from the renderer (review the diff:
// every changed line is a changed output).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { sampleJson } from '../../src/output/sample-json';
import { SampleJsonWriter } from '../../src/output/sample-json-writer';
import { renderSampleJson, SampleJsonLines } from '../../src/output/sample-json-lines';
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
  const lines = samples.flatMap((sample, i) => goldenEvents.map((event, e) => `${messages[i]!.name}\t${e}\t${renderSampleJson(sample, event)}\n`));
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
      expect(renderSampleJson(sample, goldenEvents[event])).toBe(line);
      expect(JSON.parse(line)).toBeTypeOf('object');
    });
  });

  it('writes a batch as the recorded lines of its samples, group events left out', () => {
    const batch = goldenBatch(messages);
    for (let e = 0; e < goldenEvents.length; e++) {
      const event = goldenEvents[e];
      const lines = new SampleJsonLines(event === undefined ? undefined : { decodeSample: () => event, holds: () => true, on: () => undefined, off: () => undefined });
      const { bytes, lines: count } = lines.write(batch);
      const expected = golden.filter((g) => g.event === e && !g.name.endsWith('-group')).map((g) => `${g.line}\n`);
      expect(count).toBe(expected.length);
      expect(bytes.toString()).toBe(expected.join(''));
    }
  });
});

describe('the native renderer against the TypeScript line builders it replaces', () => {
  it('renders every golden message with every event byte for byte as sampleJson() and SampleJsonWriter did', () => {
    const samples = goldenSamples(messages);
    const writer = new SampleJsonWriter();
    for (const sample of samples) {
      for (const event of goldenEvents) {
        expect(renderSampleJson(sample, event)).toBe(sampleJson(sample, event));
        writer.append(sample, event);
        expect(writer.take().toString('latin1')).toBe(Buffer.from(`${renderSampleJson(sample, event)}\n`).toString('latin1'));
      }
    }
  });
});
