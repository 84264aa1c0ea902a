import { describe, expect, it } from 'vitest';
import { TableCache } from '../../src/ovsdb/cache';
import { OvsdbClient, type OvsdbResync, type OvsdbStatus } from '../../src/ovsdb/client';
import { cacheContent, cacheReaches, portGroupWithAclsOps, serverContent, useNbServer, wholeRowSelection } from './nb-helpers';

const NB = 'OVN_Northbound';

describe('a mirror that diverged from the server (real ovsdb-server, OVN 25.03 NB)', () => {
  const fixture = useNbServer();
  const { clients } = fixture;

  it.each(['monitor_cond_since', 'monitor_cond', 'monitor'] as const)(
    'is reloaded from scratch when %s feeds it an update it cannot apply, and says so',
    async (method) => {
      const { server, schema } = fixture;
      const writer = await OvsdbClient.connect(server.unixRemote);
      const reader = await OvsdbClient.connect(server.tcpRemote, { monitorMethods: [method] });
      clients.push(writer, reader);
      await writer.transact(
        NB,
        portGroupWithAclsOps(`pg_${method}`, 20, { monitor_cond_since: 1, monitor_cond: 101, monitor: 201 }[method]),
      );
      const cache = new TableCache(schema, wholeRowSelection(schema, ['ACL', 'Sample', 'Port_Group']));
      await reader.monitor(NB, cache);
      const resyncs: OvsdbResync[] = [];
      reader.on('resync', (resync) => resyncs.push(resync));

      // Behind the monitor's back: the cache loses an ACL the server still has.
      const victim = [...cache.table('ACL').values()].find((acl) => (acl.match as string).includes(`@pg_${method} `))!;
      cache.applyUpdate2({ ACL: { [victim._uuid]: { delete: null } } });
      expect(cache.table('ACL').get(victim._uuid)).toBeUndefined();

      const resynced = new Promise<OvsdbStatus>((resolve) => reader.on('status', (status) => status.state === 'synced' && resolve(status)));
      await writer.transact(NB, [
        { op: 'update', table: 'ACL', where: [['_uuid', '==', ['uuid', victim._uuid]]], row: { priority: 4321 } },
      ]);
      expect(await resynced).toMatchObject({ state: 'synced', database: NB, method, resumed: false });
      await cacheReaches(cache, () => cache.table('ACL').get(victim._uuid)?.priority === 4321);

      expect(cache.stats.inconsistentRows).toBe(1);
      expect(reader.stats.resyncs).toBe(1);
      expect(resyncs).toEqual([{ database: NB, reason: 'inconsistent', remote: server.tcpRemote }]);
      expect(reader.stats.sessions).toBe(1);
      expect(cacheContent(cache)).toEqual(await serverContent(writer, cache));

      // The reloaded monitor keeps following the server.
      await writer.transact(NB, [{ op: 'delete', table: 'Port_Group', where: [['name', '==', `pg_${method}`]] }]);
      await cacheReaches(cache, () => cache.table('ACL').get(victim._uuid) === undefined);
      expect(cacheContent(cache)).toEqual(await serverContent(writer, cache));
      expect(reader.stats).toMatchObject({ resyncs: 1, anomalies: 0 });
    },
  );
});
