import { describe, expect, it } from 'vitest';
import { TableCache } from '../../src/ovsdb/cache';
import { OvsdbClient, type OvsdbStatus } from '../../src/ovsdb/client';
import { cacheReaches, NB_SELECTION, portGroupWithAclsOps, useNbServer } from './nb-helpers';

const NB = 'OVN_Northbound';
const STOPPED_MS = 30_000;

interface Reader {
  readonly name: string;
  readonly client: OvsdbClient;
  readonly cache: TableCache;
  readonly statuses: OvsdbStatus[];
  readonly changes: string[];
}

/**
 * ovsdb-server stopped for 30 s (SIGSTOP; as silent as one compacting a big database or a raft
 * member in an election) and continued. A standalone server keeps no transaction history, so a
 * client that dropped the connection could only come back with a full reload: with the default
 * probe settings none drops it.
 */
describe('a server that answers nothing for 30 s (standalone ovsdb-server, OVN 25.03 NB)', () => {
  const fixture = useNbServer((writer) => writer.transact(NB, portGroupWithAclsOps('pg_busy', 100, 1)));
  const { clients } = fixture;

  async function reader(name: string, remote: string, options: Parameters<typeof OvsdbClient.connect>[1] = {}): Promise<Reader> {
    const client = await OvsdbClient.connect(remote, options);
    clients.push(client);
    const cache = new TableCache(fixture.schema, NB_SELECTION);
    await client.monitor(NB, cache);
    const statuses: OvsdbStatus[] = [];
    const changes: string[] = [];
    client.on('status', (status) => statuses.push(status));
    cache.on('change', (table, uuid) => changes.push(`${table} ${uuid}`));
    return { name, client, cache, statuses, changes };
  }

  it(
    'does not make the default clients reload: no disconnection, no new sync, only the new change',
    { timeout: STOPPED_MS + 30_000 },
    async () => {
      const { server } = fixture;
      const unix = await reader('unix', server.unixRemote);
      const tcp = await reader('tcp', server.tcpRemote);
      // For contrast: a client told to give up after 10 s of silence must reload, the server having no history to resume from.
      const impatient = await reader('tcp, inactivityTimeoutMs 10 s', server.tcpRemote, {
        inactivityTimeoutMs: 10_000,
        backoff: { initialMs: 100, maxMs: 500 },
      });

      const impatientResynced = new Promise<OvsdbStatus>((resolve) =>
        impatient.client.on('status', (status) => status.state === 'synced' && resolve(status)),
      );
      process.kill(server.pid!, 'SIGSTOP');
      try {
        await new Promise((resolve) => setTimeout(resolve, STOPPED_MS));
      } finally {
        process.kill(server.pid!, 'SIGCONT');
      }
      const { writer } = fixture;
      const [sample] = (await writer.transact(NB, [{ op: 'select', table: 'Sample', where: [['metadata', '==', 7]] }])) as [
        { rows: { _uuid: [string, string] }[] },
      ];
      const sampleUuid = sample.rows[0]!._uuid[1];
      await writer.transact(NB, [{ op: 'update', table: 'Sample', where: [['metadata', '==', 7]], row: { metadata: 70_007 } }]);
      for (const { cache } of [unix, tcp, impatient]) {
        await cacheReaches(cache, () => cache.table('Sample').get(sampleUuid)?.metadata === 70_007);
      }

      for (const { name, client, statuses, changes } of [unix, tcp]) {
        expect(statuses, name).toEqual([]);
        expect(changes, name).toEqual([`Sample ${sampleUuid}`]);
        expect(client.stats, name).toMatchObject({ sessions: 1, resyncs: 0 });
      }
      expect(impatient.statuses.find((status) => status.state === 'disconnected')).toMatchObject({
        error: expect.objectContaining({ message: expect.stringContaining('inactivity probe') }),
      });
      expect(await impatientResynced).toMatchObject({ method: 'monitor_cond_since', resumed: false });
      expect(impatient.client.stats.sessions).toBe(2);
    },
  );
});
