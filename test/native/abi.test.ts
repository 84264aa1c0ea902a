import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';

import { STAT_NAMES } from '../../src/native/abi.generated';
import { addon } from '../../src/native/binding';

// native/wire/batch_layout.h and native/wire/socket_stats.h are the one definition of the batch layout and
// the counters; src/native/abi.generated.ts must be what the built addon says they are.
const root = path.join(__dirname, '..', '..');

it('the checked-in src/native/abi.generated.ts is what the built addon exports', () => {
  const check = spawnSync(process.execPath, [path.join(root, 'scripts', 'generate-native-abi.mjs'), '--check'], {
    encoding: 'utf8',
  });
  expect(check.status, check.stderr).toBe(0);
});

it('the addon declares its byte order, and it is the host order JavaScript sees', () => {
  expect(addon.abi.littleEndian).toBe(new Uint8Array(new Uint16Array([1]).buffer)[0] === 1);
});

it('the README documents every counter stats() returns', () => {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  expect(STAT_NAMES.filter((name) => !readme.includes(`| \`${name}\` |`))).toEqual([]);
});
