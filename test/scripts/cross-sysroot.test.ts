import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';

// scripts/cross/sysroot.sh as CI meets it: the mirror gone, the cache present or not, a damaged .deb.
const script = resolve(__dirname, '../../scripts/cross/sysroot.sh');
// Nothing listens on the discard port: every apt request is refused at once.
const unreachable = 'http://127.0.0.1:9/debian';
let cache: string;

beforeEach(() => {
  cache = mkdtempSync(join(tmpdir(), 'ovnps-sysroot-'));
});
afterEach(() => rmSync(cache, { recursive: true, force: true }));

function sysroot(...args: string[]) {
  const result = spawnSync('bash', [script, ...args], {
    encoding: 'utf8',
    env: { ...process.env, OVN_PSAMPLE_SYSROOT_CACHE: cache, OVN_PSAMPLE_SYSROOT_MIRROR: unreachable },
    timeout: 120_000,
  });
  return { status: result.status, stdout: result.stdout.trim(), stderr: result.stderr };
}

/** The .debs scripts/install-deps.sh left in the machine's own cache, copied into this test's. */
function seedFromInstalledCache(): string[] {
  const installed = spawnSync('bash', [script, 'x64'], { encoding: 'utf8', timeout: 300_000 });
  expect(installed.status).toBe(0);
  const archives = join(dirname(installed.stdout.trim()), 'apt', 'archives');
  mkdirSync(join(cache, 'apt'), { recursive: true });
  cpSync(archives, join(cache, 'apt', 'archives'), { recursive: true });
  return [basename(installed.stdout.trim()), join(cache, 'apt', 'archives')];
}

it('without the mirror and without a cache it fails naming the mirror and its log, and leaves no sysroot', () => {
  const { status, stdout, stderr } = sysroot('x64');
  expect(status).toBe(1);
  expect(stdout).toBe('');
  expect(stderr).toContain(`cannot reach ${unreachable} for bullseye (log: ${cache}/apt-update.log)`);
  expect(readdirSync(cache).filter((name) => name.startsWith('bullseye-'))).toEqual([]);
});

it('with the .debs cached it builds offline: the same sysroot, glibc 2.31, no link leading out of it', () => {
  const [installedName] = seedFromInstalledCache();
  const { status, stdout, stderr } = sysroot('x64');
  expect({ status, stderr }).toEqual({ status: 0, stderr: '' });
  expect(basename(stdout)).toBe(installedName);
  expect(existsSync(join(stdout, 'lib', 'x86_64-linux-gnu', 'libc-2.31.so'))).toBe(true);
  expect(existsSync(join(stdout, 'usr', 'include', 'c++', '10', 'thread'))).toBe(true);
  expect(readlinkSync(join(stdout, 'lib64', 'ld-linux-x86-64.so.2'))).toBe('../lib/x86_64-linux-gnu/ld-2.31.so');
  const absolute: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isSymbolicLink() && isAbsolute(readlinkSync(path))) absolute.push(path);
      else if (entry.isDirectory()) walk(path);
    }
  };
  walk(stdout);
  expect(absolute).toEqual([]);
});

it('a damaged cached .deb fails the run with what to do, is removed, and leaves no sysroot behind', () => {
  const [, archives] = seedFromInstalledCache();
  const damaged = readdirSync(archives!).find((name) => name.startsWith('libc6_') && name.endsWith('_amd64.deb'))!;
  truncateSync(join(archives!, damaged), 4096);
  const { status, stderr } = sysroot('x64');
  expect(status).toBe(1);
  expect(stderr).toContain(`${join(archives!, damaged)} could not be unpacked and is removed from the cache: run again to download it`);
  expect(existsSync(join(archives!, damaged))).toBe(false);
  expect(readdirSync(cache).filter((name) => name.startsWith('bullseye-') && !name.endsWith('.partial'))).toEqual([]);
});

it('unknown machines are refused with the ones it has', () => {
  const { status, stderr } = sysroot('s390x');
  expect(status).toBe(1);
  expect(stderr).toContain('no bullseye sysroot for s390x (one of x64, arm64)');
});
