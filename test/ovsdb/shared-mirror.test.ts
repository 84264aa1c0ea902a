import { describe, expect, it } from 'vitest';
import { OvsdbClosedError, OvsdbSchemaError } from '../../src/errors';
import type { CacheSelection } from '../../src/ovsdb/cache';
import { OvsdbClient, type OvsdbResync, type OvsdbStatus } from '../../src/ovsdb/client';
import { SharedMirror } from '../../src/ovsdb/shared-mirror';
import { serverMonitorCount } from '../support/ovsdb-server';
import { cacheContent, portGroupWithAclsOps, serverContent, startBusyWriter, useNbServer } from './nb-helpers';

const NB = 'OVN_Northbound';

/** What one reader (a decoder's ACL index, say) reads. */
const ACLS: CacheSelection = { ACL: { columns: ['priority', 'sample_new'], indexes: ['sample_new'] }, Sample: { columns: ['metadata'] } };
/** What another reads: a column of ACL the first does not, a table of its own, an index on a shared table. */
const GROUPS: CacheSelection = {
  ACL: { columns: ['match', 'external_ids'] },
  Port_Group: { columns: ['name', 'acls'], indexes: ['acls'] },
  Sample: { columns: ['metadata'], indexes: ['metadata'] },
};

describe('SharedMirror: one cache per database per client, shared by its readers (real ovsdb-server, OVN 25.03 NB)', () => {
  const fixture = useNbServer((writer) => writer.transact(NB, portGroupWithAclsOps('pg_seed', 50, 1)));
  const { clients } = fixture;

  async function reader(): Promise<OvsdbClient> {
    const client = await OvsdbClient.connect(fixture.server.unixRemote);
    clients.push(client);
    return client;
  }

  it('readers joining in the same turn get one cache, one monitor and one initial sync of the union of what they read', async () => {
    const client = await reader();
    const before = await serverMonitorCount(fixture.server);
    const statuses: OvsdbStatus[] = [];
    client.on('status', (status) => statuses.push(status));
    const acls = SharedMirror.join(client, NB, ACLS);
    const groups = SharedMirror.join(client, NB, GROUPS);
    const [aclCache, groupCache] = await Promise.all([acls.cache, groups.cache]);
    expect(aclCache).toBe(groupCache);
    await Promise.all([acls.synced, groups.synced]);
    expect(statuses.filter((status) => status.state === 'synced')).toHaveLength(1);
    expect(await serverMonitorCount(fixture.server)).toBe(before + 1);
    expect(Object.fromEntries([...aclCache.monitoredColumns()].map(([table, columns]) => [table, [...columns].sort()]))).toEqual({
      ACL: ['external_ids', 'match', 'priority', 'sample_new'],
      Port_Group: ['acls', 'name'],
      Sample: ['metadata'],
    });
    expect(cacheContent(aclCache)).toEqual(await serverContent(fixture.writer, aclCache));

    await acls.leave();
    expect(await serverMonitorCount(fixture.server)).toBe(before + 1);
    await groups.leave();
    expect(await serverMonitorCount(fixture.server)).toBe(before);
  });

  it('a reader that joins later and reads more widens the cache, reloaded once on the live session, while a writer commits', async () => {
    const client = await reader();
    const resyncs: OvsdbResync[] = [];
    client.on('resync', (resync) => resyncs.push(resync));
    const writer = startBusyWriter(fixture.writer, 'pg_widen', 1_000_000);
    try {
      const acls = SharedMirror.join(client, NB, ACLS);
      const cache = await acls.cache;
      await acls.synced;
      // The first reader's index works before, during and after the widening.
      const before = await serverMonitorCount(fixture.server);
      const groups = SharedMirror.join(client, NB, GROUPS);
      expect(await groups.cache).toBe(cache);
      // The new columns are there at once (with defaults), so a reader never meets a row without them.
      for (const row of cache.table('ACL').values()) expect(row).toHaveProperty('match');
      await groups.synced;
      expect(await serverMonitorCount(fixture.server)).toBe(before);
      expect(resyncs).toEqual([{ database: NB, reason: 'selection-widened', remote: fixture.server.unixRemote }]);
      expect(client.stats).toMatchObject({ sessions: 1, resyncs: 1, anomalies: 0 });
      await writer.pause();
      for (let attempt = 0; attempt < 100; attempt++) {
        if (JSON.stringify(cacheContent(cache)) === JSON.stringify(await serverContent(fixture.writer, cache))) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(cacheContent(cache)).toEqual(await serverContent(fixture.writer, cache));
      expect(cache.table('Port_Group').lookup('acls', cache.table('ACL').values().next().value!._uuid)).toHaveLength(1);
      expect(cache.stats).toMatchObject({ malformedRows: 0, inconsistentRows: 0, failedListenerCalls: 0 });
      await Promise.all([acls.leave(), groups.leave()]);
    } finally {
      await writer.stop();
    }
  });

  it('a reader that joins while the initial sync is in flight, and reads more, is synced with the union', async () => {
    const client = await reader();
    const acls = SharedMirror.join(client, NB, ACLS);
    const cache = await acls.cache;
    // The initial monitor request is out, its reply not in yet.
    const groups = SharedMirror.join(client, NB, GROUPS);
    await Promise.all([acls.synced, groups.synced]);
    expect(cacheContent(cache)).toEqual(await serverContent(fixture.writer, cache));
    expect(cache.monitoredColumns().get('ACL')).toContain('match');
    await Promise.all([acls.leave(), groups.leave()]);
  });

  it('a reader whose schema check fails is refused alone; leaving before the sync leaves no monitor behind', async () => {
    const client = await reader();
    const before = await serverMonitorCount(fixture.server);
    const refused = SharedMirror.join(client, NB, GROUPS, () => {
      throw new OvsdbSchemaError('this reader needs another database');
    });
    const accepted = SharedMirror.join(client, NB, ACLS);
    await expect(refused.cache).rejects.toThrow('this reader needs another database');
    await expect(refused.synced).rejects.toBeInstanceOf(OvsdbSchemaError);
    const cache = await accepted.cache;
    expect(cache.monitoredColumns().has('Port_Group')).toBe(false);
    await accepted.synced;
    expect(await serverMonitorCount(fixture.server)).toBe(before + 1);
    await accepted.leave();

    const hasty = SharedMirror.join(client, NB, ACLS);
    const leaving = hasty.leave();
    await expect(hasty.synced).rejects.toBeInstanceOf(OvsdbClosedError);
    await leaving;
    expect(await serverMonitorCount(fixture.server)).toBe(before);
    // The mirror is made afresh for the next reader.
    const again = SharedMirror.join(client, NB, ACLS);
    await again.synced;
    expect((await again.cache).table('ACL').size).toBe((await serverContent(fixture.writer, cache)).ACL!.length);
    await again.leave();
    expect(await serverMonitorCount(fixture.server)).toBe(before);
  });

  it('a reader whose listener throws during the widening reload keeps neither the reload nor the other readers from finishing', async () => {
    const client = await reader();
    const errors: Error[] = [];
    client.on('error', (error) => errors.push(error));
    const acls = SharedMirror.join(client, NB, ACLS);
    const cache = await acls.cache;
    await acls.synced;
    cache.on('change', () => {
      throw new Error('index bug');
    });
    const groups = SharedMirror.join(client, NB, GROUPS);
    await groups.synced;
    expect(cache.stats.failedListenerCalls).toBeGreaterThan(0);
    expect(errors.length).toBeGreaterThan(0);
    expect(cacheContent(cache)).toEqual(await serverContent(fixture.writer, cache));
    await Promise.all([acls.leave(), groups.leave()]);
  });

  it('readers of a client that closes are told so, and a closed client gets no mirror', async () => {
    const client = await reader();
    const acls = SharedMirror.join(client, NB, ACLS);
    await acls.synced;
    await client.close();
    const late = SharedMirror.join(client, NB, GROUPS);
    await expect(late.synced).rejects.toBeInstanceOf(OvsdbClosedError);
    await acls.leave();
    await expect(SharedMirror.join(client, NB, ACLS).synced).rejects.toBeInstanceOf(OvsdbClosedError);
  });
});
