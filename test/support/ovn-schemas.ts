import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
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

export interface OvnSchemaPaths {
  readonly nb: string;
  readonly sb: string;
  /** Where the schemas come from (the Debian package and version). */
  readonly provenance: string;
}

/** Extracts the schemas from `suite`'s ovn-central (RELEASE as fetch-ovn-schemas.sh takes it) into the cache. */
async function fetchSchemas(name: string, release: string, suite: string): Promise<OvnSchemaPaths> {
  const cache = testCacheDir();
  const dir = join(cache, name);
  const paths = { nb: join(dir, 'ovn-nb.ovsschema'), sb: join(dir, 'ovn-sb.ovsschema') };
  if (!existsSync(paths.nb) || !existsSync(paths.sb)) {
    await mkdir(cache, { recursive: true });
    try {
      // Under flock because test files run in parallel processes.
      await run('flock', [join(cache, 'apt.lock'), 'sh', FETCH_SCRIPT, join(cache, `apt-${suite}`), dir, release, suite], {
        maxBuffer: 16 * 1024 * 1024,
      });
    } catch (error) {
      const stderr = (error as { stderr?: string }).stderr ?? '';
      throw new Error(
        `Could not fetch Debian ${suite}'s ovn-central for OVN ${release} schemas (needs apt-get, dpkg-deb, flock and the Debian mirror): ${stderr.slice(-2000)}`,
        { cause: error },
      );
    }
  }
  return { ...paths, provenance: readFileSync(join(dir, 'PROVENANCE'), 'utf8').trim() };
}

/** Paths of the real OVN NB and SB schemas, extracted from Debian trixie's ovn-central package. */
export async function ovnSchemaPaths(): Promise<OvnSchemaPaths> {
  return fetchSchemas(`ovn-schemas-${OVN_SCHEMA_RELEASE}`, OVN_SCHEMA_RELEASE, 'trixie');
}

/**
 * A NB schema newer than OVN_SCHEMA_RELEASE, to convert a live database to (an OVN upgrade): the
 * real one of Debian sid's ovn-central when it is newer (26.03 when this was written, which adds
 * ACL.network_function_group and Network_Function* tables). Should sid ever lack a newer one,
 * the 25.03 schema with its version bumped, a column added to ACL and a table added stands in,
 * and the provenance says so.
 */
export async function newerNbSchemaPath(): Promise<{ nb: string; provenance: string }> {
  try {
    const { nb, provenance } = await fetchSchemas('ovn-schemas-sid', `newer:${OVN_SCHEMA_RELEASE}`, 'sid');
    return { nb, provenance };
  } catch (error) {
    const dir = join(testCacheDir(), 'ovn-schemas-synthetic');
    const nb = join(dir, 'ovn-nb.ovsschema');
    const schema = JSON.parse(readFileSync((await ovnSchemaPaths()).nb, 'utf8')) as {
      version: string;
      cksum?: string;
      tables: Record<string, { columns: Record<string, unknown>; isRoot?: boolean }>;
    };
    schema.version = schema.version.replace(/^(\d+)\.\d+\.\d+$/, (_all, major: string) => `${major}.99.0`);
    delete schema.cksum;
    schema.tables.ACL!.columns.psample_note = { type: { key: 'string', min: 0, max: 1 } };
    schema.tables.Psample_Test = { columns: { name: { type: 'string' } }, isRoot: true };
    await mkdir(dir, { recursive: true });
    await writeFile(nb, JSON.stringify(schema, null, 2));
    return {
      nb,
      provenance: `synthetic: OVN ${OVN_SCHEMA_RELEASE} NB schema, version ${schema.version}, ACL.psample_note and table Psample_Test added (${(error as Error).message.slice(0, 200)})`,
    };
  }
}
