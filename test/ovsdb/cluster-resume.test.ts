import { describe, expect, it } from 'vitest';
import { TableCache } from '../../src/ovsdb/cache';
import { OvsdbClient, type OvsdbStatus } from '../../src/ovsdb/client';
import { cacheContent, cacheReaches, NB_SELECTION, portGroupWithAclsOps, useNbCluster } from './nb-helpers';

const NB = 'OVN_Northbound';

describe('a clustered NB reader resuming on another member', () => {
  const fixture = useNbCluster();
  const { clients } = fixture;

  it('whose cache listener threw still advanced its transaction id: the resume replays nothing and counts no inconsistency', async () => {
    const fast = { backoff: { initialMs: 50, maxMs: 500 }, inactivityProbeMs: 1000, database: NB };
    const writer = await OvsdbClient.connect(fixture.cluster.remotes, { ...fast, leaderOnly: true });
    clients.push(writer);
    const reader = await OvsdbClient.connect(fixture.cluster.remotes, fast);
    clients.push(reader);
    reader.on('error', () => undefined);
    const cache = new TableCache(fixture.schema, NB_SELECTION);
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
    await fixture.cluster.members.find((member) => member.tcpRemote === first)!.kill('SIGKILL');
    expect(await resynced).toMatchObject({ method: 'monitor_cond_since', resumed: true });
    expect(cache.stats.inconsistentRows).toBe(0);

    const fresh = new TableCache(fixture.schema, NB_SELECTION);
    await reader.monitor(NB, fresh);
    expect(cacheContent(cache)).toEqual(cacheContent(fresh));
  });

  it('a resync asked for while the session is down reloads on the next member instead of resuming, so widened columns arrive', async () => {
    for (const member of fixture.cluster.members) if (!member.running) await member.start();
    await fixture.cluster.leader();
    const fast = { backoff: { initialMs: 50, maxMs: 500 }, inactivityProbeMs: 1000, database: NB };
    const writer = await OvsdbClient.connect(fixture.cluster.remotes, { ...fast, leaderOnly: true });
    clients.push(writer);
    const reader = await OvsdbClient.connect(fixture.cluster.remotes, fast);
    clients.push(reader);
    const cache = new TableCache(fixture.schema, { ACL: { columns: ['priority'] } });
    await reader.monitor(NB, cache);
    await writer.transact(NB, portGroupWithAclsOps('pg_widened_while_down', 5, 100));
    await cacheReaches(cache, () => [...cache.table('ACL').values()].length >= 5);
    const first = reader.remote;

    // A shared mirror gains a reader with more columns the moment the session drops, before the next one is up.
    const resynced = new Promise<void>((resolve) =>
      reader.on('status', (status) => {
        if (status.state === 'disconnected' && status.remote === first) {
          cache.widen({ ACL: { columns: ['match'] } });
          resolve(reader.resync(cache));
        }
      }),
    );
    const synced = new Promise<OvsdbStatus>((resolve) =>
      reader.on('status', (status) => status.state === 'synced' && status.remote !== first && resolve(status)),
    );
    await fixture.cluster.members.find((member) => member.tcpRemote === first)!.kill('SIGKILL');
    expect(await synced).toMatchObject({ method: 'monitor_cond_since', resumed: false });
    await resynced;

    const fresh = new TableCache(fixture.schema, { ACL: { columns: ['priority', 'match'] } });
    await reader.monitor(NB, fresh);
    expect(cacheContent(cache)).toEqual(cacheContent(fresh));
    expect([...cache.table('ACL').values()].every((acl) => (acl.match as string).startsWith('outport == @'))).toBe(true);
  });
});
