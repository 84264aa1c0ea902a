import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TableCache } from '../../src/ovsdb/cache';
import { OvsdbClient, type OvsdbStatus } from '../../src/ovsdb/client';
import { loadSchemaFile } from '../../src/ovsdb/schema';
import { ovnSchemaPaths } from '../support/ovn-schemas';
import { OvsdbServer } from '../support/ovsdb-server';
import { NB_SELECTION } from './nb-helpers';

interface SchemaJson {
  tables: Record<string, { columns: Record<string, { type: unknown }> }>;
}

/**
 * The real OVN 25.03 NB schema without the Sample table and the columns that refer to it: what an
 * OVN older than 24.09 serves. The client must sync what exists and name what is missing.
 */
async function schemaWithoutSamples(dir: string): Promise<string> {
  const schema = JSON.parse(await readFile((await ovnSchemaPaths()).nb, 'utf8')) as SchemaJson;
  delete schema.tables.Sample;
  for (const table of Object.values(schema.tables)) {
    for (const [name, column] of Object.entries(table.columns)) {
      if (JSON.stringify(column.type).includes('"refTable":"Sample"')) {
        delete table.columns[name];
      }
    }
  }
  const path = join(dir, 'ovn-nb-without-samples.ovsschema');
  await writeFile(path, JSON.stringify(schema));
  return path;
}

describe('a server whose schema lacks selected tables and columns', () => {
  let dir: string;
  let server: OvsdbServer;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ovn-psample-older-schema-'));
    server = await OvsdbServer.start({ schema: await schemaWithoutSamples(dir) });
  });

  afterAll(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('monitors what the server has, reports what it lacks, and leaves defaults in its place', async () => {
    const client = await OvsdbClient.connect(server.unixRemote);
    try {
      await client.transact('OVN_Northbound', [
        { op: 'insert', table: 'ACL', row: { action: 'drop', direction: 'to-lport', priority: 10, match: 'ip4' }, 'uuid-name': 'a' },
        { op: 'insert', table: 'Port_Group', row: { name: 'pg_old', acls: ['named-uuid', 'a'] } },
      ]);
      const statuses: OvsdbStatus[] = [];
      client.on('status', (status) => statuses.push(status));
      const cache = new TableCache(await loadSchemaFile((await ovnSchemaPaths()).nb), NB_SELECTION);
      await client.monitor('OVN_Northbound', cache);
      expect(statuses.find((status) => status.state === 'synced')).toMatchObject({
        missing: expect.arrayContaining(['ACL.sample_new', 'ACL.sample_est', 'Sample']),
      });
      const [acl] = cache.table('ACL').values();
      expect(acl).toMatchObject({ action: 'drop', priority: 10, sample_new: undefined, sample_est: undefined });
      expect(cache.table('Sample').size).toBe(0);
    } finally {
      await client.close();
    }
  });
});
