import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TableCache } from '../../src/ovsdb/cache';
import { OvsdbClient, type OvsdbStatus } from '../../src/ovsdb/client';
import { loadSchemaFile, type DatabaseSchema } from '../../src/ovsdb/schema';
import { ovnSchemaPaths } from '../support/ovn-schemas';
import { OvsdbCluster } from '../support/ovsdb-server';
import { cacheContent, cacheReaches, NB_SELECTION, portGroupWithAclsOps } from './nb-helpers';

const NB = 'OVN_Northbound';

describe('a clustered NB reader whose cache listener threw, resuming on another member', () => {
  let cluster: OvsdbCluster;
  let schema: DatabaseSchema;
  const clients: OvsdbClient[] = [];

  beforeAll(async () => {
    const { nb } = await ovnSchemaPaths();
    schema = await loadSchemaFile(nb);
    cluster = await OvsdbCluster.start({ schema: nb });
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await cluster?.stop();
  });

  it('still advanced its transaction id: the resume replays nothing and counts no inconsistency', async () => {
    const fast = { backoff: { initialMs: 50, maxMs: 500 }, inactivityProbeMs: 1000, database: NB };
    const writer = await OvsdbClient.connect(cluster.remotes, { ...fast, leaderOnly: true });
    clients.push(writer);
    const reader = await OvsdbClient.connect(cluster.remotes, fast);
    clients.push(reader);
    reader.on('error', () => undefined);
    const cache = new TableCache(schema, NB_SELECTION);
    await reader.monitor(NB, cache);
    const first = reader.remote;

    let failing = true;
    cache.on('change', () => {
      if (failing) {
        throw new Error('listener bug');
      }
    });
    await writer.transact(NB, portGroupWithAclsOps('pg_resume', 5, 1));
    await cacheReaches(cache, () => cache.table('ACL').size === 5);
    failing = false;
    expect(cache.stats.failedListenerCalls).toBe(11);

    const resynced = new Promise<OvsdbStatus>((resolve) =>
      reader.on('status', (status) => status.state === 'synced' && status.remote !== first && resolve(status)),
    );
    await cluster.members.find((member) => member.tcpRemote === first)!.kill('SIGKILL');
    expect(await resynced).toMatchObject({ method: 'monitor_cond_since', resumed: true });
    expect(cache.stats.inconsistentRows).toBe(0);

    const fresh = new TableCache(schema, NB_SELECTION);
    await reader.monitor(NB, fresh);
    expect(cacheContent(cache)).toEqual(cacheContent(fresh));
  });
});
