import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { OvsdbListenerError } from '../../src/errors';
import { TableCache } from '../../src/ovsdb/cache';
import { OvsdbClient, type OvsdbStatus } from '../../src/ovsdb/client';
import { cacheReaches, NB_SELECTION, portGroupWithAclsOps, useNbServer } from './nb-helpers';

const run = promisify(execFile);
const NB = 'OVN_Northbound';
const FAST = { backoff: { initialMs: 50, maxMs: 200 } };

describe('OvsdbClient with listeners that throw, against a real ovsdb-server', () => {
  const fixture = useNbServer((writer) => writer.transact(NB, portGroupWithAclsOps('pg_listeners', 10, 1)), { restoreAfterEach: true });

  async function connect(): Promise<OvsdbClient> {
    const client = await OvsdbClient.connect(fixture.server.tcpRemote, FAST);
    fixture.clients.push(client);
    return client;
  }

  function errorsOf(client: OvsdbClient): Error[] {
    const errors: Error[] = [];
    client.on('error', (error) => errors.push(error));
    return errors;
  }

  it('syncs and keeps following a cache whose change listener throws, reporting each failed update', async () => {
    const client = await connect();
    const errors = errorsOf(client);
    const cache = new TableCache(fixture.schema, NB_SELECTION);
    cache.on('change', () => {
      throw new Error('listener bug');
    });
    await client.monitor(NB, cache);
    expect(cache.table('ACL').size).toBe(10);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(OvsdbListenerError);
    expect((errors[0] as OvsdbListenerError).errors).toHaveLength(cache.stats.failedListenerCalls);

    // Two rows in one update: a throw on the first must not keep the second out.
    await client.transact(NB, [
      { op: 'mutate', table: 'Sample', where: [['metadata', '==', 1]], mutations: [['metadata', '+=', 100]] },
      { op: 'mutate', table: 'Sample', where: [['metadata', '==', 2]], mutations: [['metadata', '+=', 100]] },
    ]);
    await cacheReaches(cache, () => cache.table('Sample').lookup('metadata', 102).length === 1);
    expect(cache.table('Sample').lookup('metadata', 101)).toHaveLength(1);
    expect(errors).toHaveLength(2);
    expect(client.stats.anomalies).toBe(2);
    expect(client.connected).toBe(true);
  });

  it('applies a resync snapshot completely, deletions included, although a change listener throws', async () => {
    const client = await connect();
    errorsOf(client);
    const cache = new TableCache(fixture.schema, NB_SELECTION);
    await client.monitor(NB, cache);
    const victim = cache.table('Sample').lookup('metadata', 5)[0]!;
    cache.on('change', () => {
      throw new Error('listener bug');
    });
    await fixture.server.kill('SIGKILL');
    await run('ovsdb-tool', [
      'transact',
      fixture.server.dbPath,
      JSON.stringify([
        NB,
        { op: 'update', table: 'ACL', where: [['sample_new', '==', ['uuid', victim._uuid]]], row: { sample_new: ['set', []] } },
        { op: 'delete', table: 'Sample', where: [['_uuid', '==', ['uuid', victim._uuid]]] },
        { op: 'mutate', table: 'Sample', where: [['metadata', '==', 6]], mutations: [['metadata', '+=', 600]] },
      ]),
    ]);
    await fixture.server.start();
    await cacheReaches(cache, () => cache.table('Sample').lookup('metadata', 606).length === 1);
    expect(cache.table('Sample').get(victim._uuid)).toBeUndefined();
    expect(cache.table('ACL').lookup('sample_new', victim._uuid)).toEqual([]);
    expect(cache.stats.inconsistentRows).toBe(0);
  });

  it('keeps reconnecting when a status listener throws, and reports the failures', async () => {
    const client = await connect();
    const errors = errorsOf(client);
    const cache = new TableCache(fixture.schema, NB_SELECTION);
    await client.monitor(NB, cache);
    client.on('status', () => {
      throw new Error('status listener bug');
    });
    const seen: OvsdbStatus[] = [];
    client.on('status', (status) => seen.push(status));
    await fixture.server.kill('SIGKILL');
    await fixture.server.start();
    await new Promise<void>((resolve) => {
      const check = (): void => {
        if (client.connected && seen.some((status) => status.state === 'synced')) {
          resolve();
        } else {
          setTimeout(check, 20);
        }
      };
      check();
    });
    // The listener registered first throws, and the one after it still hears every status.
    expect(seen.map((status) => status.state)).toEqual(expect.arrayContaining(['disconnected', 'connecting', 'connected', 'synced']));
    expect(errors.length).toBeGreaterThanOrEqual(4);
    expect(errors.every((error) => error instanceof OvsdbListenerError)).toBe(true);
    expect(client.stats.anomalies).toBe(errors.length);
  });

  it('survives an error listener that throws: the anomaly is still counted and the session lives on', async () => {
    const client = await connect();
    client.on('error', () => {
      throw new Error('error listener bug');
    });
    const cache = new TableCache(fixture.schema, NB_SELECTION);
    cache.on('change', () => {
      throw new Error('listener bug');
    });
    await client.monitor(NB, cache);
    await client.transact(NB, [{ op: 'mutate', table: 'Sample', where: [['metadata', '==', 3]], mutations: [['metadata', '+=', 300]] }]);
    await cacheReaches(cache, () => cache.table('Sample').lookup('metadata', 303).length === 1);
    expect(client.stats.anomalies).toBe(2);
    expect(client.stats.sessions).toBe(1);
    expect(client.connected).toBe(true);
  });
});
