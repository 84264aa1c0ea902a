import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { testCacheDir } from './ovn-schemas';

const run = promisify(execFile);

/**
 * A program from a Debian package of another suite, extracted once into the test cache (no
 * install, the host's apt untouched): trixie's kustomize renders deploy/'s overlays here, as
 * Debian 12 has none. `release` is the version its package must have ("5.6": any 5.6.x).
 */
export async function debianTool(suite: string, pkg: string, release: string, file: string): Promise<string> {
  const cache = testCacheDir();
  const dir = join(cache, `${pkg}-${suite}-${release}`);
  const path = join(dir, file.split('/').pop()!);
  if (existsSync(path)) return path;
  await mkdir(cache, { recursive: true });
  try {
    // The same apt state and lock as the schemas: test files run in parallel processes.
    await run(
      'flock',
      [join(cache, 'apt.lock'), 'sh', join(__dirname, 'fetch-ovn-schemas.sh'), join(cache, `apt-${suite}`), dir, release, suite, pkg, file],
      {
        maxBuffer: 16 * 1024 * 1024,
      },
    );
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(
      `Could not fetch Debian ${suite}'s ${pkg} ${release} (needs apt-get, dpkg-deb, flock and the Debian mirror): ${stderr.slice(-2000)}`,
      {
        cause: error,
      },
    );
  }
  return path;
}
