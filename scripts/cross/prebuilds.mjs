#!/usr/bin/env node
// Cross-builds the addon's prebuilds for the other Linux machines the package ships for (arm64,
// s390x) with Debian's cross compilers (g++-aarch64-linux-gnu, g++-s390x-linux-gnu), through
// prebuildify --arch, into prebuilds/linux-ARCH. Each is built in a scratch copy of the sources,
// so build/ (the host's addon, which node-gyp-build loads first) is never overwritten, and only
// when a native source is newer than the prebuild. `npm pack` runs it (prepack).
//
// usage: node scripts/cross/prebuilds.mjs [ARCH...]   (default: every arch in MACHINES)
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MACHINES, elfMachine } from './machines.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
// What the addon is built from: binding.gyp and the native files the package ships (package.json
// "files"), not native/'s build and fuzzing folders.
const SOURCES = [
  'binding.gyp',
  ...JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).files.filter((entry) => entry.startsWith('native/')),
];

function newestSource(entry) {
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(entry).map((name) => newestSource(path.join(entry, name))));
}

function prebuildOf(arch) {
  const dir = path.join(root, 'prebuilds', `linux-${arch}`);
  const file = path.join(dir, 'ovn-psample.node');
  return { dir, file };
}

function upToDate(arch) {
  const { file } = prebuildOf(arch);
  return existsSync(file) && statSync(file).mtimeMs > Math.max(...SOURCES.map((entry) => newestSource(path.join(root, entry))));
}

function build(arch) {
  const { triplet } = MACHINES[arch];
  const scratch = mkdtempSync(path.join(os.tmpdir(), `ovn-psample-${arch}-`));
  try {
    for (const entry of [...SOURCES, 'package.json']) cpSync(path.join(root, entry), path.join(scratch, entry), { recursive: true });
    symlinkSync(path.join(root, 'node_modules'), path.join(scratch, 'node_modules'));
    const started = Date.now();
    const result = spawnSync(
      process.execPath,
      [path.join(root, 'node_modules', 'prebuildify', 'bin.js'), '--napi', '--strip', '--arch', arch],
      {
        cwd: scratch,
        stdio: ['ignore', 'inherit', 'inherit'],
        env: {
          ...process.env,
          // node-gyp builds offline only against the installed Node headers.
          npm_config_nodedir: process.env.npm_config_nodedir ?? '/usr',
          CC: `${triplet}-gcc`,
          CXX: `${triplet}-g++`,
          LINK: `${triplet}-g++`,
          AR: `${triplet}-ar`,
          PREBUILD_STRIP_BIN: `${triplet}-strip`,
        },
      },
    );
    if (result.status !== 0) {
      throw new Error(
        `the ${arch} cross build failed (exit ${result.status}): is ${triplet}-g++ installed (apt-get install g++-${triplet})?`,
      );
    }
    const { dir, file } = prebuildOf(arch);
    rmSync(dir, { recursive: true, force: true });
    cpSync(path.join(scratch, 'prebuilds', `linux-${arch}`), dir, { recursive: true });
    const machine = elfMachine(file);
    if (machine !== MACHINES[arch].elfMachine) throw new Error(`${file} is built for ELF machine ${machine}, not ${arch}`);
    console.log(`prebuilds/linux-${arch}: built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const wanted = process.argv.slice(2);
for (const arch of wanted.length > 0 ? wanted : Object.keys(MACHINES)) {
  if (MACHINES[arch] === undefined) throw new Error(`unknown arch ${arch}: one of ${Object.keys(MACHINES).join(', ')}`);
  if (upToDate(arch)) console.log(`prebuilds/linux-${arch}: up to date`);
  else build(arch);
}
