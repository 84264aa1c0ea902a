import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { OvsdbClosedError, OvsdbConnectionError, OvsdbTransactionError } from '../../src/errors';
import { TableCache } from '../../src/ovsdb/cache';
import { OvsdbClient, type OvsdbStatus } from '../../src/ovsdb/client';
import type { MonitorMethod } from '../../src/ovsdb/monitor';
import { freePort } from '../support/ovsdb-server';
import { cacheContent, cacheReaches, NB_SELECTION, portGroupWithAclsOps, useNbServer } from './nb-helpers';

const run = promisify(execFile);
const NB = 'OVN_Northbound';

describe('OvsdbClient against a real ovsdb-server serving the OVN 25.03 NB schema', () => {
  const fixture = useNbServer((writer) => writer.transact(NB, portGroupWithAclsOps('pg_base', 20, 1)), {
    ipv6: true,
    restoreAfterEach: true,
  });

  async function connect(
    remote: string | readonly string[],
    options: Parameters<typeof OvsdbClient.connect>[1] = {},
  ): Promise<OvsdbClient> {
    const client = await OvsdbClient.connect(remote, options);
    fixture.clients.push(client);
    return client;
  }

  function statuses(client: OvsdbClient): OvsdbStatus[] {
    const seen: OvsdbStatus[] = [];
    client.on('status', (status) => seen.push(status));
    return seen;
  }

  it.each([
    ['unix', () => fixture.server.unixRemote],
    ['tcp', () => fixture.server.tcpRemote],
    ['tcp over an IPv6 literal', () => fixture.server.ipv6Remote],
  ])('connects over %s, reads the schema and syncs the cache', async (_kind, remote) => {
    const client = await connect(remote());
    expect(await client.listDatabases()).toEqual(expect.arrayContaining([NB, '_Server']));
    const served = await client.getSchema(NB);
    expect(served.version).toBe(fixture.schema.version);
    expect([...served.tables.keys()].sort()).toEqual([...fixture.schema.tables.keys()].sort());
    const cache = new TableCache(fixture.schema, NB_SELECTION);
    await client.monitor(NB, cache);
    expect(cache.table('ACL').size).toBeGreaterThanOrEqual(20);
    const sample = cache.table('Sample').lookup('metadata', 5)[0]!;
    const [acl] = cache.table('ACL').lookup('sample_new', sample._uuid);
    expect(acl).toMatchObject({ direction: 'to-lport', match: 'outport == @pg_base && ip4.src == 10.0.0.4', sample_est: undefined });
    expect(acl!.external_ids).toEqual(
      new Map([
        ['k8s.ovn.org/name', 'ns4:policy4'],
        ['k8s.ovn.org/owner-type', 'NetworkPolicy'],
      ]),
    );
    expect(cache.table('Port_Group').lookup('acls', acl!._uuid)[0]!.name).toBe('pg_base');
  });

  it.each<[string, MonitorMethod[], MonitorMethod]>([
    ['monitor_cond_since', ['monitor_cond_since'], 'monitor_cond_since'],
    ['monitor_cond', ['monitor_cond'], 'monitor_cond'],
    ['monitor', ['monitor'], 'monitor'],
    // The server answers "unknown method" for a method it lacks: the client falls back.
    ['an unknown method, then monitor_cond', ['monitor_cond_since_v9' as MonitorMethod, 'monitor_cond'], 'monitor_cond'],
  ])('tracks inserts, set/map/optional modifications and deletes with %s', async (_name, monitorMethods, used) => {
    const client = await connect(fixture.server.tcpRemote, { monitorMethods });
    const seen = statuses(client);
    const cache = new TableCache(fixture.schema, NB_SELECTION);
    await client.monitor(NB, cache);
    expect(seen).toContainEqual(expect.objectContaining({ state: 'synced', method: used, missing: [] }));

    const pgName = `pg_${used}_${monitorMethods.length}`;
    await client.transact(NB, portGroupWithAclsOps(pgName, 3, 1000 + monitorMethods.length * 100 + used.length * 10));
    await cacheReaches(cache, () => [...cache.table('Port_Group').values()].some((row) => row.name === pgName));
    const pg = [...cache.table('Port_Group').values()].find((row) => row.name === pgName)!;
    const [first, second, third] = pg.acls as string[];
    await client.transact(NB, [
      {
        op: 'mutate',
        table: 'Port_Group',
        where: [['_uuid', '==', ['uuid', pg._uuid]]],
        mutations: [['acls', 'delete', ['uuid', third!]]],
      },
      {
        op: 'update',
        table: 'ACL',
        where: [['_uuid', '==', ['uuid', first!]]],
        row: {
          priority: 7,
          name: 'renamed',
          external_ids: [
            'map',
            [
              ['k8s.ovn.org/name', 'ns:changed'],
              ['extra', 'x'],
            ],
          ],
        },
      },
      { op: 'update', table: 'ACL', where: [['_uuid', '==', ['uuid', second!]]], row: { sample_new: ['set', []], label: 42 } },
    ]);
    await cacheReaches(cache, () => cache.table('ACL').get(third!) === undefined && cache.table('ACL').get(first!)?.priority === 7);
    expect(cache.table('ACL').get(first!)).toMatchObject({ priority: 7, name: 'renamed' });
    expect(cache.table('ACL').get(first!)!.external_ids).toEqual(
      new Map([
        ['k8s.ovn.org/name', 'ns:changed'],
        ['extra', 'x'],
      ]),
    );
    expect(cache.table('ACL').get(second!)).toMatchObject({ sample_new: undefined, label: 42 });
    expect(cache.table('Port_Group').get(pg._uuid)!.acls).toEqual([first, second]);

    // A fresh monitor built from scratch must see exactly what the incrementally updated cache holds.
    const fresh = new TableCache(fixture.schema, NB_SELECTION);
    await client.monitor(NB, fresh);
    expect(cacheContent(cache)).toEqual(cacheContent(fresh));
    expect(cache.stats).toEqual({ malformedRows: 0, inconsistentRows: 0, unselectedTableRows: 0, failedListenerCalls: 0 });
  });

  it('syncs a multi-megabyte initial reply exactly as a select transaction reads the same rows', async () => {
    const client = await connect(fixture.server.unixRemote);
    for (let group = 0; group < 5; group++) {
      await client.transact(NB, portGroupWithAclsOps(`pg_big${group}`, 1000, 100_000 + group * 1000));
    }
    const cache = new TableCache(fixture.schema, NB_SELECTION);
    const replies: number[] = [];
    client.on('status', (status) => status.state === 'synced' && replies.push(cache.table('ACL').size));
    await client.monitor(NB, cache);
    expect(replies[0]).toBeGreaterThanOrEqual(5000);

    const selected = new TableCache(fixture.schema, NB_SELECTION);
    const [acls, samples, groups] = (await client.transact(NB, [
      { op: 'select', table: 'ACL', where: [] },
      { op: 'select', table: 'Sample', where: [] },
      { op: 'select', table: 'Port_Group', where: [] },
    ])) as { rows: Record<string, unknown>[] }[];
    const asUpdate = (result: { rows: Record<string, unknown>[] }) =>
      Object.fromEntries(result.rows.map((row) => [(row._uuid as [string, string])[1], { new: row }]));
    selected.applyUpdate({ ACL: asUpdate(acls!), Sample: asUpdate(samples!), Port_Group: asUpdate(groups!) });
    expect(cacheContent(cache)).toEqual(cacheContent(selected));
    expect(cache.stats).toEqual({ malformedRows: 0, inconsistentRows: 0, unselectedTableRows: 0, failedListenerCalls: 0 });
  });

  it('rejects a failing transaction with the server reason and commits nothing', async () => {
    const client = await connect(fixture.server.unixRemote);
    const attempt = client.transact(NB, [
      { op: 'insert', table: 'Sample', row: { metadata: 990 }, 'uuid-name': 's' },
      {
        op: 'insert',
        table: 'ACL',
        row: { action: 'explode', direction: 'to-lport', priority: 1, match: '1', sample_new: ['named-uuid', 's'] },
      },
    ]);
    await expect(attempt).rejects.toBeInstanceOf(OvsdbTransactionError);
    await expect(attempt).rejects.toMatchObject({ code: 'OVSDB_TRANSACTION', message: expect.stringContaining('constraint violation') });
    const [select] = (await client.transact(NB, [{ op: 'select', table: 'Sample', where: [['metadata', '==', 990]] }])) as [
      { rows: unknown[] },
    ];
    expect(select.rows).toEqual([]);
  });

  it('reconnects after a crash and converges to changes made while it was down', async () => {
    const client = await connect(fixture.server.tcpRemote, { backoff: { initialMs: 50, maxMs: 200 } });
    const seen = statuses(client);
    const cache = new TableCache(fixture.schema, NB_SELECTION);
    await client.monitor(NB, cache);
    const sample = cache.table('Sample').lookup('metadata', 3)[0]!;
    const changes: string[] = [];
    cache.on('change', (table, uuid, _old, row) => changes.push(`${table} ${uuid} ${row === undefined ? 'deleted' : 'changed'}`));

    await fixture.server.kill('SIGKILL');
    await run('ovsdb-tool', [
      'transact',
      fixture.server.dbPath,
      JSON.stringify([NB, { op: 'update', table: 'Sample', where: [['_uuid', '==', ['uuid', sample._uuid]]], row: { metadata: 333 } }]),
    ]);
    await fixture.server.start();
    await cacheReaches(cache, () => cache.table('Sample').get(sample._uuid)?.metadata === 333);

    expect(changes).toEqual([`Sample ${sample._uuid} changed`]);
    expect(cache.table('Sample').lookup('metadata', 3)).toEqual([]);
    expect(seen.map((status) => status.state)).toEqual(expect.arrayContaining(['disconnected', 'connecting', 'connected', 'synced']));
    expect(seen.find((status) => status.state === 'disconnected')).toMatchObject({ error: expect.any(Error) });
    expect(client.stats.sessions).toBeGreaterThanOrEqual(2);
  });

  it('after a stable session, waits a jittered first backoff step before reconnecting, not 0 ms', async () => {
    const client = await connect(fixture.server.tcpRemote, { backoff: { initialMs: 400, maxMs: 800, jitter: 0.5 } });
    const seen = statuses(client);
    // A session counts as stable after 5 s: then a drop is a server restart, which all its clients see at once.
    await new Promise((resolve) => setTimeout(resolve, 5200));
    await fixture.server.kill('SIGKILL');
    await fixture.server.start();
    await expect.poll(() => seen.some((status) => status.state === 'synced' || status.state === 'connected'), { timeout: 5000 }).toBe(true);
    const first = seen.find((status) => status.state === 'disconnected') as { retryInMs: number };
    expect(first.retryInMs).toBeGreaterThanOrEqual(200);
    expect(first.retryInMs).toBeLessThanOrEqual(400);
  });

  it('drops a silent tcp server after inactivityTimeoutMs and comes back when it answers again', async () => {
    const client = await connect(fixture.server.tcpRemote, {
      inactivityProbeMs: 200,
      inactivityTimeoutMs: 400,
      backoff: { initialMs: 50, maxMs: 100 },
    });
    const seen = statuses(client);
    const cache = new TableCache(fixture.schema, NB_SELECTION);
    await client.monitor(NB, cache);
    const dropped = new Promise<OvsdbStatus>((resolve) =>
      client.on('status', (status) => status.state === 'disconnected' && resolve(status)),
    );
    process.kill(fixture.server.pid!, 'SIGSTOP');
    try {
      expect((await dropped) as { error: Error }).toMatchObject({
        error: expect.objectContaining({ message: expect.stringContaining('inactivity probe') }),
      });
    } finally {
      process.kill(fixture.server.pid!, 'SIGCONT');
    }
    const resynced = new Promise<void>((resolve) => client.on('status', (status) => status.state === 'synced' && resolve()));
    await resynced;
    expect(seen.filter((status) => status.state === 'synced').length).toBeGreaterThanOrEqual(1);
    expect(client.connected).toBe(true);
  });

  it('gives up on an unreachable remote after connectTimeoutMs, naming the cause', async () => {
    const port = await freePort();
    await expect(OvsdbClient.connect(`tcp:127.0.0.1:${port}`, { connectTimeoutMs: 300, backoff: { initialMs: 20 } })).rejects.toMatchObject(
      {
        code: 'OVSDB_CONNECTION',
        message: expect.stringMatching(new RegExp(`tcp:127.0.0.1:${port}: .*ECONNREFUSED`)),
      },
    );
  });

  it('times requests out with a typed error naming every remote and its last error when none is usable', async () => {
    const dead = `tcp:127.0.0.1:${await freePort()}`;
    const client = await connect(`${fixture.server.unixRemote},${dead}`, { requestTimeoutMs: 500, backoff: { initialMs: 20, maxMs: 50 } });
    await fixture.server.kill('SIGKILL');
    const outcomes = await Promise.allSettled([client.transact(NB, []), client.getSchema(NB), client.listDatabases()]);
    for (const outcome of outcomes) {
      const error = outcome.status === 'rejected' ? (outcome.reason as unknown) : undefined;
      expect(error).toBeInstanceOf(OvsdbConnectionError);
      expect(error).toMatchObject({
        code: 'OVSDB_CONNECTION',
        message: expect.stringMatching(
          /^Cannot (transact on OVN_Northbound|get_schema OVN_Northbound|list_dbs): no OVSDB remote was usable within 500 ms/,
        ),
      });
      const { message, attempts: remotes } = error as OvsdbConnectionError;
      // The killed server's socket file is left behind: connecting to it is refused.
      expect(message).toContain(`${fixture.server.unixRemote}: connect ECONNREFUSED`);
      expect(message).toContain(`${dead}: connect ECONNREFUSED`);
      expect(remotes.map(({ remote }) => remote)).toEqual([fixture.server.unixRemote, dead]);
      expect(remotes.every(({ error: last }) => last instanceof Error)).toBe(true);
    }
  });

  it('tries the members in random order, as the OVS IDL does, unless told not to', async () => {
    const members = [fixture.server.unixRemote, fixture.server.tcpRemote];
    const firsts = new Set<string>();
    for (let attempt = 0; attempt < 16; attempt++) {
      const client = await connect(members);
      firsts.add(client.remote);
      await client.close();
    }
    expect([...firsts].sort()).toEqual([...members].sort());
    const ordered = await connect(members, { shuffleRemotes: false });
    expect(ordered.remote).toBe(fixture.server.unixRemote);
  });

  it('moves on from an unreachable member of a list to a working one', async () => {
    const dead = `tcp:127.0.0.1:${await freePort()}`;
    const client = await connect(`${dead},${fixture.server.tcpRemote}`);
    expect(client.remote).toBe(fixture.server.tcpRemote);
  });

  it('honours an AbortSignal while connecting and after', async () => {
    const controller = new AbortController();
    const pending = OvsdbClient.connect(`tcp:127.0.0.1:${await freePort()}`, { signal: controller.signal, backoff: { initialMs: 20 } });
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(OvsdbClosedError);

    const later = new AbortController();
    const client = await connect(fixture.server.unixRemote, { signal: later.signal });
    const seen = statuses(client);
    const cache = new TableCache(fixture.schema, NB_SELECTION);
    await client.monitor(NB, cache);
    later.abort();
    await expect(client.transact(NB, [])).rejects.toBeInstanceOf(OvsdbClosedError);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen.at(-1)).toMatchObject({ state: 'disconnected', error: undefined });
    await expect(OvsdbClient.connect(fixture.server.unixRemote, { signal: later.signal })).rejects.toBeInstanceOf(OvsdbClosedError);
  });

  it('refuses a cache built for another database, a cache monitored twice and an unknown database', async () => {
    const client = await connect(fixture.server.unixRemote);
    await expect(client.monitor('OVN_Southbound', new TableCache(fixture.schema, NB_SELECTION))).rejects.toMatchObject({
      code: 'OVSDB_SCHEMA',
    });
    const cache = new TableCache(fixture.schema, NB_SELECTION);
    await client.monitor(NB, cache);
    await expect(client.monitor(NB, cache)).rejects.toThrow(/already monitored/);
    await expect(client.getSchema('Nope')).rejects.toMatchObject({ code: 'OVSDB_RPC' });
    await expect(OvsdbClient.connect('http://x')).rejects.toMatchObject({ code: 'OVSDB_REMOTE' });
  });
});
