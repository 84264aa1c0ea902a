#!/usr/bin/env node
// Builds the addon's prebuilds, prebuilds/linux-ARCH, through prebuildify (--arch for the other
// machines) with each machine's toolchain (machines.mjs): clang against Debian 11's sysroot
// (sysroot.sh) for x64 and arm64, Debian's cross g++ for s390x. The host's (--host, `npm run
// build:native`) is built in place, so build/ holds the same addon node-gyp-build loads in
// development; the others (`npm run build:cross`, run by `npm run build` and `npm pack`) in a
// scratch copy of the sources, so build/ stays the host's, and only when a native source is newer
// than the prebuild.
//
// usage: node scripts/cross/prebuilds.mjs --host | [ARCH...]   (default: every arch but the host's)
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { HOST_ARCH, MACHINES, elfMachine } from './machines.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
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

function prebuildOf(arch, base = root) {
  const dir = path.join(base, 'prebuilds', `linux-${arch}`);
  return { dir, file: path.join(dir, 'ovn-psample.node') };
}

function upToDate(arch) {
  const { file } = prebuildOf(arch);
  return existsSync(file) && statSync(file).mtimeMs > Math.max(...SOURCES.map((entry) => newestSource(path.join(root, entry))));
}

/** node-gyp's compiler, linker, archiver and prebuildify's strip for one machine. */
function toolchain(arch) {
  const { triplet, sysroot } = MACHINES[arch];
  const binutils = { AR: `${triplet}-ar`, PREBUILD_STRIP_BIN: `${triplet}-strip` };
  if (!sysroot) return { CC: `${triplet}-gcc`, CXX: `${triplet}-g++`, LINK: `${triplet}-g++`, ...binutils };
  const dir = execFileSync('bash', [path.join(here, 'sysroot.sh'), arch], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
  // clang takes headers, crt files, libc and GCC 10's libstdc++ from the sysroot alone.
  const target = `--target=${triplet} --sysroot=${dir}`;
  return { CC: `clang ${target}`, CXX: `clang++ ${target}`, LINK: `clang++ ${target}`, ...binutils };
}

function prebuildify(arch, cwd) {
  const started = Date.now();
  const result = spawnSync(
    process.execPath,
    [path.join(root, 'node_modules', 'prebuildify', 'bin.js'), '--napi', '--strip', ...(arch === HOST_ARCH ? [] : ['--arch', arch])],
    {
      cwd,
      stdio: ['ignore', 'inherit', 'inherit'],
      // node-gyp builds offline only against the installed Node headers, and runs one compiler at a
      // time unless JOBS says otherwise: three builds per `npm run build` wait on it.
      env: {
        ...process.env,
        npm_config_nodedir: process.env.npm_config_nodedir ?? '/usr',
        JOBS: process.env.JOBS ?? 'max',
        ...toolchain(arch),
      },
    },
  );
  if (result.status !== 0) {
    const { triplet, sysroot } = MACHINES[arch];
    const needs = sysroot ? `clang and ${triplet}'s binutils` : `g++-${triplet}`;
    throw new Error(`the ${arch} build failed (exit ${result.status}): are ${needs} installed (bash scripts/install-deps.sh)?`);
  }
  const { file } = prebuildOf(arch, cwd);
  const machine = elfMachine(file);
  if (machine !== MACHINES[arch].elfMachine) throw new Error(`${file} is built for ELF machine ${machine}, not ${arch}`);
  console.log(`prebuilds/linux-${arch}: built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

function buildInScratch(arch) {
  const scratch = mkdtempSync(path.join(os.tmpdir(), `ovn-psample-${arch}-`));
  try {
    for (const entry of [...SOURCES, 'package.json']) cpSync(path.join(root, entry), path.join(scratch, entry), { recursive: true });
    symlinkSync(path.join(root, 'node_modules'), path.join(scratch, 'node_modules'));
    prebuildify(arch, scratch);
    const { dir } = prebuildOf(arch);
    rmSync(dir, { recursive: true, force: true });
    cpSync(prebuildOf(arch, scratch).dir, dir, { recursive: true });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const wanted = process.argv.slice(2);
if (wanted[0] === '--host') {
  prebuildify(HOST_ARCH, root);
} else {
  for (const arch of wanted.length > 0 ? wanted : Object.keys(MACHINES).filter((name) => name !== HOST_ARCH)) {
    if (MACHINES[arch] === undefined) throw new Error(`unknown arch ${arch}: one of ${Object.keys(MACHINES).join(', ')}`);
    if (upToDate(arch)) console.log(`prebuilds/linux-${arch}: up to date`);
    else buildInScratch(arch);
  }
}
