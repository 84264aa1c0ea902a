import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Shared with scripts/bench/ovsdb.mjs, which needs the same schemas. */
const FETCH_SCRIPT = join(__dirname, 'fetch-ovn-schemas.sh');

/** The OVN release whose schemas the tests serve: the one Debian trixie ships. */
export const OVN_SCHEMA_RELEASE = '25.03';

/** Stable across runs so the package is fetched once; override with $OVN_PSAMPLE_CACHE. */
export function testCacheDir(): string {
  return process.env.OVN_PSAMPLE_CACHE ?? resolve(__dirname, '../../node_modules/.cache/ovn-psample');
}

/** Paths of the real OVN NB and SB schemas, extracted from Debian trixie's ovn-central package. */
export async function ovnSchemaPaths(): Promise<{ nb: string; sb: string }> {
  const cache = testCacheDir();
  const dir = join(cache, `ovn-schemas-${OVN_SCHEMA_RELEASE}`);
  const paths = { nb: join(dir, 'ovn-nb.ovsschema'), sb: join(dir, 'ovn-sb.ovsschema') };
  if (existsSync(paths.nb) && existsSync(paths.sb)) {
    return paths;
  }
  await mkdir(cache, { recursive: true });
  try {
    // Under flock because test files run in parallel processes.
    await run('flock', [join(cache, 'apt.lock'), 'sh', FETCH_SCRIPT, join(cache, 'apt-trixie'), dir, OVN_SCHEMA_RELEASE], {
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(
      `Could not fetch Debian trixie's ovn-central for the OVN ${OVN_SCHEMA_RELEASE} schemas (needs apt-get, dpkg-deb, flock and the Debian mirror): ${stderr.slice(-2000)}`,
      { cause: error },
    );
  }
  return paths;
}
