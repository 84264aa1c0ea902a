import { describe, expect, it } from 'vitest';
import { TableCache } from '../../src/ovsdb/cache';
import { OvsdbClient, type OvsdbStatus } from '../../src/ovsdb/client';
import { cacheContent, cacheReaches, NB_SELECTION, portGroupWithAclsOps, useNbCluster } from './nb-helpers';

const NB = 'OVN_Northbound';

describe('a 3-member clustered NB (ovsdb-tool create-cluster/join-cluster) losing its leader', () => {
  const fixture = useNbCluster();
  const { clients } = fixture;

  it('prefers the leader for writes, and a reader resumes on a follower without reloading when the leader dies', async () => {
    const leader = await fixture.cluster.leader();
    const followers = fixture.cluster.members.filter((member) => member !== leader);
    const fast = { backoff: { initialMs: 50, maxMs: 500 }, inactivityProbeMs: 1000 };

    // Listed leader-last: leaderOnly must skip the followers.
    const writer = await OvsdbClient.connect([...followers.map((member) => member.tcpRemote), leader.tcpRemote], {
      ...fast,
      leaderOnly: true,
      database: NB,
    });
    clients.push(writer);
    expect(writer.remote).toBe(leader.tcpRemote);
    await writer.transact(NB, portGroupWithAclsOps('pg_cluster', 10, 1));

    // Listed leader-first, in that order: the reader starts on the leader and must fail over.
    const reader = await OvsdbClient.connect([leader.tcpRemote, ...followers.map((member) => member.tcpRemote)], {
      ...fast,
      database: NB,
      shuffleRemotes: false,
    });
    clients.push(reader);
    const seen: OvsdbStatus[] = [];
    reader.on('status', (status) => seen.push(status));
    const cache = new TableCache(fixture.schema, NB_SELECTION);
    await reader.monitor(NB, cache);
    expect(reader.remote).toBe(leader.tcpRemote);
    // One more transaction so the reader holds a transaction id from the cluster's history.
    await writer.transact(NB, [{ op: 'mutate', table: 'Sample', where: [['metadata', '==', 1]], mutations: [['metadata', '+=', 100]] }]);
    await cacheReaches(cache, () => cache.table('Sample').lookup('metadata', 101).length === 1);
    const initialEvents: string[] = [];
    cache.on('change', (table, uuid) => initialEvents.push(`${table} ${uuid}`));

    const resynced = new Promise<OvsdbStatus>((resolve) =>
      reader.on('status', (status) => status.state === 'synced' && status.remote !== leader.tcpRemote && resolve(status)),
    );
    await leader.kill('SIGKILL');
    const synced = await resynced;
    expect(synced).toMatchObject({ state: 'synced', method: 'monitor_cond_since', resumed: true });
    expect(followers.map((member) => member.tcpRemote)).toContain(reader.remote);
    expect(initialEvents).toEqual([]);
    expect(seen.find((status) => status.state === 'disconnected')).toMatchObject({ remote: leader.tcpRemote, error: expect.any(Error) });

    // The writer finds the newly elected leader and its change reaches the reader's cache.
    const newLeader = await fixture.cluster.leader();
    await writer.transact(NB, [{ op: 'mutate', table: 'Sample', where: [['metadata', '==', 2]], mutations: [['metadata', '+=', 200]] }]);
    expect(writer.remote).toBe(newLeader.tcpRemote);
    await cacheReaches(cache, () => cache.table('Sample').lookup('metadata', 202).length === 1);
    expect(initialEvents).toHaveLength(1);

    const fresh = new TableCache(fixture.schema, NB_SELECTION);
    await reader.monitor(NB, fresh);
    expect(cacheContent(cache)).toEqual(cacheContent(fresh));
    expect(cache.table('ACL').size).toBe(10);
  });
});
