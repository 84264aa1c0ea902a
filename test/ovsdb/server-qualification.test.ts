import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OvsdbClosedError } from '../../src/errors';
import { TableCache } from '../../src/ovsdb/cache';
import { OvsdbClient } from '../../src/ovsdb/client';
import { loadSchemaFile, type DatabaseSchema } from '../../src/ovsdb/schema';
import { SERVER_DATABASE_COLUMNS, ServerDatabaseJudge, type ServerDatabaseRow } from '../../src/ovsdb/server-database';
import { ovnSchemaPaths } from '../support/ovn-schemas';
import { freePort, OvsdbRelay, OvsdbServer, serverMonitorCount } from '../support/ovsdb-server';
import { cacheReaches, NB_SELECTION, portGroupWithAclsOps } from './nb-helpers';

const NB = 'OVN_Northbound';
const DATABASE_UUID = '0b6b7a4c-4a76-4d4b-9e39-7d0d3c1f2a01';

describe('which servers an OvsdbClient accepts, and what it leaves behind, against real ovsdb-servers', () => {
  let server: OvsdbServer;
  let schema: DatabaseSchema;
  let serverSchema: DatabaseSchema;

  beforeAll(async () => {
    const { nb } = await ovnSchemaPaths();
    schema = await loadSchemaFile(nb);
    server = await OvsdbServer.start({ schema: nb });
    const writer = await OvsdbClient.connect(server.unixRemote);
    await writer.transact(NB, portGroupWithAclsOps('pg_qualify', 5, 1));
    serverSchema = await writer.getSchema('_Server');
    await writer.close();
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('refuses a server that does not hold the database it was asked for', async () => {
    await expect(
      OvsdbClient.connect(server.unixRemote, { database: 'OVN_Southbound', connectTimeoutMs: 500, backoff: { initialMs: 20 } }),
    ).rejects.toMatchObject({
      code: 'OVSDB_CONNECTION',
      message: expect.stringContaining('does not serve database OVN_Southbound'),
    });
  });

  it('refuses a relay that has not reached its source (its _Server row has no schema)', async () => {
    const relay = await OvsdbRelay.start({ database: NB, source: `tcp:127.0.0.1:${await freePort()}` });
    try {
      await expect(
        OvsdbClient.connect(relay.unixRemote, { database: NB, connectTimeoutMs: 500, backoff: { initialMs: 20 } }),
      ).rejects.toMatchObject({
        code: 'OVSDB_CONNECTION',
        message: expect.stringContaining(`relay database ${NB} has not reached its source yet (no schema)`),
      });
    } finally {
      await relay.stop();
    }
  });

  it('refuses a clustered member older than the newest raft index already seen (rows in the served _Server schema)', () => {
    const judge = new ServerDatabaseJudge(NB, false);
    const cache = new TableCache(serverSchema, { Database: { columns: [...SERVER_DATABASE_COLUMNS] } });
    const rows = cache.table<ServerDatabaseRow>('Database');
    const member = (index: number) => ({ name: NB, model: 'clustered', connected: true, leader: false, index, schema: '{}' });
    cache.applyUpdate2({ Database: { [DATABASE_UUID]: { initial: member(40) } } }, { snapshot: true });
    expect(judge.unsuitableReason(rows)).toBeUndefined();
    cache.applyUpdate2({ Database: { [DATABASE_UUID]: { initial: member(35) } } }, { snapshot: true });
    expect(judge.unsuitableReason(rows)).toBe(`its clustered database ${NB} is stale (raft index 35, already seen 40)`);
    cache.applyUpdate2({ Database: { [DATABASE_UUID]: { initial: member(41) } } }, { snapshot: true });
    expect(judge.unsuitableReason(rows)).toBeUndefined();
    cache.applyUpdate2({ Database: { [DATABASE_UUID]: { initial: { ...member(41), schema: ['set', []] } } } }, { snapshot: true });
    expect(judge.unsuitableReason(rows)).toContain('has not joined the cluster yet (no schema)');
  });

  it('unmonitor() cancels the monitor on the server and the cache stops changing, with no anomaly', async () => {
    const client = await OvsdbClient.connect(server.tcpRemote);
    try {
      const before = await serverMonitorCount(server);
      const cache = new TableCache(schema, NB_SELECTION);
      await client.monitor(NB, cache);
      expect(await serverMonitorCount(server)).toBe(before + 1);
      await client.unmonitor(cache);
      expect(await serverMonitorCount(server)).toBe(before);
      const changes: string[] = [];
      cache.on('change', (table, uuid) => changes.push(`${table} ${uuid}`));
      await client.transact(NB, [{ op: 'mutate', table: 'Sample', where: [['metadata', '==', 1]], mutations: [['metadata', '+=', 100]] }]);
      // A monitor that still exists proves the update went out before this point.
      const witness = new TableCache(schema, NB_SELECTION);
      await client.monitor(NB, witness);
      await cacheReaches(witness, () => witness.table('Sample').lookup('metadata', 101).length === 1);
      expect(changes).toEqual([]);
      expect(client.stats.anomalies).toBe(0);
      // The same cache can be monitored again afterwards.
      await client.unmonitor(witness);
      await client.monitor(NB, cache);
      expect(cache.table('Sample').lookup('metadata', 101)).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  it('unmonitor() of a cache still waiting for its first sync rejects that monitor() with OvsdbClosedError', async () => {
    const client = await OvsdbClient.connect(server.tcpRemote);
    try {
      const cache = new TableCache(schema, NB_SELECTION);
      const monitoring = client.monitor(NB, cache);
      await client.unmonitor(cache);
      await expect(monitoring).rejects.toBeInstanceOf(OvsdbClosedError);
    } finally {
      await client.close();
    }
  });

  it('takes its abort listener off the caller signal when closed', async () => {
    const controller = new AbortController();
    for (let i = 0; i < 3; i++) {
      const client = await OvsdbClient.connect(server.unixRemote, { signal: controller.signal });
      await client.close();
    }
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('rejects backoff options that would spin (initialMs 0, factor below 1) with a typed error', async () => {
    await expect(OvsdbClient.connect(server.unixRemote, { backoff: { initialMs: 0 } })).rejects.toMatchObject({
      code: 'OVSDB_OPTION',
      message: expect.stringContaining('backoff.initialMs'),
    });
    await expect(OvsdbClient.connect(server.unixRemote, { backoff: { factor: 0.5 } })).rejects.toMatchObject({ code: 'OVSDB_OPTION' });
    await expect(OvsdbClient.connect(server.unixRemote, { backoff: { maxMs: Number.NaN } })).rejects.toMatchObject({
      code: 'OVSDB_OPTION',
    });
  });
});
