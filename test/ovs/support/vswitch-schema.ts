import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { testCacheDir } from '../../support/ovn-schemas';

const run = promisify(execFile);

/** The Open vSwitch release whose schema the collector tests serve: the one Debian trixie ships. */
export const OVS_SCHEMA_RELEASE = '3.5';

/** vswitch.ovsschema from Debian trixie's openvswitch-switch (fetched once into the test cache). */
export async function vswitchSchemaPath(): Promise<string> {
  const cache = testCacheDir();
  const dir = join(cache, `vswitch-schema-${OVS_SCHEMA_RELEASE}`);
  const path = join(dir, 'vswitch.ovsschema');
  if (existsSync(path)) {
    return path;
  }
  await mkdir(cache, { recursive: true });
  try {
    // The same apt state and lock as the OVN schemas: test files run in parallel processes.
    // trixie ships the schema in openvswitch-switch (not openvswitch-common); bookworm's 3.1 has no local_group_id.
    const fetch = join(__dirname, '..', '..', 'support', 'fetch-ovn-schemas.sh');
    await run(
      'flock',
      [
        join(cache, 'apt.lock'),
        'sh',
        fetch,
        join(cache, 'apt-trixie'),
        dir,
        OVS_SCHEMA_RELEASE,
        'trixie',
        'openvswitch-switch',
        '/usr/share/openvswitch/vswitch.ovsschema',
      ],
      {
        maxBuffer: 16 * 1024 * 1024,
      },
    );
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(
      `Could not fetch Debian trixie's openvswitch-switch for the OVS ${OVS_SCHEMA_RELEASE} schema (needs apt-get, dpkg-deb, flock and the Debian mirror): ${stderr.slice(-2000)}`,
      { cause: error },
    );
  }
  return path;
}
