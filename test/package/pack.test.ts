import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { encodePsample } from '../../src/index';

const root = path.join(__dirname, '..', '..');
let dir: string;
let installed: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'ovnps-pack-'));
  const tarball = execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: root, encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop()!;
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', path.join(dir, tarball)], { cwd: dir, stdio: 'pipe' });
  installed = path.join(dir, 'node_modules', 'ovn-psample');
}, 180_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('installs from the tarball with the prebuilt addon and no build step', () => {
  expect(existsSync(path.join(installed, 'prebuilds', 'linux-x64'))).toBe(true);
  expect(existsSync(path.join(installed, 'build'))).toBe(false);
  const loaded = execFileSync(process.execPath, ['-p', `require('node-gyp-build').path(${JSON.stringify(installed)})`], {
    cwd: dir,
    encoding: 'utf8',
  });
  expect(loaded).toContain(path.join(installed, 'prebuilds', 'linux-x64'));
});

/** The newest symbol version of `prefix` (GLIBC_, GLIBCXX_, CXXABI_) a binary needs, as the dynamic loader checks it. */
function newestVersion(file: string, prefix: string): string {
  const versions = [
    ...execFileSync('readelf', ['--version-info', '--wide', file], { encoding: 'utf8' }).matchAll(
      new RegExp(`Name: ${prefix}([0-9.]+)`, 'g'),
    ),
  ]
    .map((match) => match[1]!)
    .sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  return versions[versions.length - 1]!;
}

it('carries a prebuild for linux-x64, linux-arm64 and linux-s390x, each for its machine, none needing more than its stated glibc and libstdc++', async () => {
  const { MACHINES, elfMachine } = (await import(path.join(root, 'scripts', 'cross', 'machines.mjs'))) as {
    MACHINES: Record<string, { elfMachine: number; needs: Record<string, string> }>;
    elfMachine: (file: string) => number;
  };
  expect(Object.keys(MACHINES)).toEqual(['x64', 'arm64', 's390x']);
  for (const [arch, machine] of Object.entries(MACHINES)) {
    const file = path.join(installed, 'prebuilds', `linux-${arch}`, 'ovn-psample.node');
    expect({ arch, machine: elfMachine(file) }).toEqual({ arch, machine: machine.elfMachine });
    const needs = Object.fromEntries(Object.keys(machine.needs).map((library) => [library, newestVersion(file, `${library}_`)]));
    expect({ arch, needs }).toEqual({ arch, needs: machine.needs });
  }
});

it('loads from CommonJS and from ESM, with type declarations', () => {
  const cjs = execFileSync(
    process.execPath,
    ['-e', "const p = require('ovn-psample'); console.log(typeof p.openPsample, p.decodePsample(new Uint8Array(0)).length)"],
    { cwd: dir, encoding: 'utf8' },
  );
  expect(cjs.trim()).toBe('function 0');
  const esm = execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      "import { openPsample, decodeOvsCookie } from 'ovn-psample'; console.log(typeof openPsample, typeof decodeOvsCookie)",
    ],
    { cwd: dir, encoding: 'utf8' },
  );
  expect(esm.trim()).toBe('function function');
  expect(existsSync(path.join(installed, 'dist', 'index.d.ts'))).toBe(true);
});

it('carries every source binding.gyp compiles (native/sources.json), so the package also builds from source', () => {
  const lists = JSON.parse(readFileSync(path.join(installed, 'native', 'sources.json'), 'utf8')) as Record<string, string[]>;
  const missing = Object.values(lists)
    .flat()
    .filter((source) => !existsSync(path.join(installed, 'native', source)));
  expect(missing).toEqual([]);
});

it('ships a working CLI', () => {
  const out = execFileSync(path.join(dir, 'node_modules', '.bin', 'ovn-psample'), ['decode', '--help'], {
    encoding: 'utf8',
  });
  expect(out).toMatch(/--hex/);
});

it("the installed CLI runs node with the options on its '#!/usr/bin/env -S node …' line", async () => {
  const bin = path.join(dir, 'node_modules', '.bin', 'ovn-psample');
  const options = /^#!\/usr\/bin\/env -S node (.+)$/.exec(readFileSync(bin, 'utf8').split('\n', 1)[0]!)?.[1]?.split(' ');
  expect(options).toContain('--max-semi-space-size=4');
  // decode waits on its stdin meanwhile; env has exec'd node in its place, with those options first.
  const run = spawn(bin, ['decode', '--file', '-'], { stdio: ['pipe', 'ignore', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => run.on('exit', resolve));
  const argv = (): string[] => readFileSync(`/proc/${run.pid}/cmdline`, 'utf8').split('\0');
  for (const limit = Date.now() + 10_000; path.basename(argv()[0]!) !== 'node' && Date.now() < limit;) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const [node, ...rest] = argv();
  expect(path.basename(node!)).toBe('node');
  expect(rest.slice(0, options!.length)).toEqual(options);
  run.stdin.end(`${Buffer.from(encodePsample({ group: 10 })).toString('hex')}\n`);
  expect(await exited).toBe(0);
});
