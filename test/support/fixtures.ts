import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

export const fixtureDir = path.join(__dirname, '..', 'fixtures', 'psample');

export interface Vector {
  name: string;
  bytes: Uint8Array;
  expected: {
    nlmsgLen: number;
    familyId: number;
    cmd: number;
    version: number;
    attrs: Record<string, unknown>;
  };
}

/** The real kernel captures (see test/fixtures/psample/README.md). */
export function vectors(): Vector[] {
  return readdirSync(fixtureDir)
    .filter((f) => f.endsWith('.hex'))
    .sort()
    .map((file) => {
      const name = file.replace(/\.hex$/, '');
      return {
        name,
        bytes: Uint8Array.from(Buffer.from(readFileSync(path.join(fixtureDir, file), 'utf8').trim(), 'hex')),
        expected: JSON.parse(readFileSync(path.join(fixtureDir, `${name}.json`), 'utf8')),
      };
    });
}
