// The packet JSON golden corpus: for each input (test/packet/packet-golden.ts) the JSON the decoder
// wrote when the corpus was recorded (first from the TypeScript decoder the native one replaced).
// PACKET_JSON_GOLDEN=write records it again from the current decoder (review the diff: every
// changed line is a changed output). npm run test:asan runs it against the sanitized addon.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

import { addon } from '../../src/native/binding';
import { goldenInputs } from './packet-golden';

const GOLDEN = join(__dirname, '..', 'fixtures', 'packet-json', 'golden.tsv.gz');

interface GoldenLine {
  name: string;
  proto: number;
  bytes: Uint8Array;
  json: string;
}

function readGolden(): GoldenLine[] {
  return gunzipSync(readFileSync(GOLDEN))
    .toString('utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [name, proto, hex, json] = line.split('\t') as [string, string, string, string];
      return { name, proto: Number(proto), bytes: Uint8Array.from(Buffer.from(hex, 'hex')), json };
    });
}

const render = (bytes: Uint8Array, proto: number): string => addon.packetJson(bytes, proto);

if (process.env.PACKET_JSON_GOLDEN === 'write') {
  const lines = goldenInputs().map(
    ({ name, proto, bytes }) => `${name}\t${proto}\t${Buffer.from(bytes).toString('hex')}\t${render(bytes, proto)}\n`,
  );
  writeFileSync(GOLDEN, gzipSync(lines.join(''), { level: 9 }));
}

describe('packet JSON golden corpus', () => {
  const golden = readGolden();

  it('holds every input the corpus is made of', () => {
    expect(golden.map((line) => line.name)).toEqual(goldenInputs().map((input) => input.name));
  });

  it('writes the recorded JSON for every input', () => {
    for (const { name, proto, bytes, json } of golden) expect(render(bytes, proto), name).toBe(json);
  });
});
