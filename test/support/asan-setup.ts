import { readFileSync } from 'node:fs';
import path from 'node:path';

import { addon } from '../../src/native/binding';

// Runs first in every test process of npm run test:asan: a run that silently used the
// uninstrumented addon, or none of ASan's runtime, would pass without checking anything.
const prebuild = process.env.OVN_PSAMPLE_PREBUILD;
if (prebuild === undefined) throw new Error('test:asan: OVN_PSAMPLE_PREBUILD is not set: run it with `npm run test:asan`');
void addon;
const maps = readFileSync('/proc/self/maps', 'utf8');
if (!/libclang_rt\.asan-[\w]+\.so/.test(maps))
  throw new Error("test:asan: clang's ASan runtime is not loaded in this process (LD_PRELOAD)");
const addons = new Set(
  maps
    .split('\n')
    .filter((line) => line.endsWith('.node'))
    .map((line) => line.slice(line.indexOf('/'))),
);
const sanitized = path.join(prebuild, 'build', 'Release', 'ovn_psample.node');
if (addons.size !== 1 || !addons.has(sanitized)) {
  throw new Error(`test:asan: expected only ${sanitized} to be loaded, found ${[...addons].join(', ') || 'no addon'}`);
}
