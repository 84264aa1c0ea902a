import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TableCache } from '../../src/ovsdb/cache';
import { OvsdbClient, type OvsdbStatus } from '../../src/ovsdb/client';
import { OvnSampleDecoder } from '../../src/ovn/decoder';
import { northboundSelection } from '../../src/ovn/selection';
import { ovnSchemaPaths } from '../support/ovn-schemas';
import { OvsdbServer } from '../support/ovsdb-server';
import { cacheContent, serverContent, startBusyWriter } from '../ovsdb/nb-helpers';
import { NorthboundTransaction, OVNK_SAMPLING_APP_IDS } from './support/ovnk-fixtures';

const NB = 'OVN_Northbound';
const RESTARTS = 20;

describe(`a decoder's NB mirror across ${RESTARTS} kill -9 and restarts of its ovsdb-server while ACLs change`, () => {
  let server: OvsdbServer;
  const clients: OvsdbClient[] = [];

  beforeAll(async () => {
    server = await OvsdbServer.start({ schema: (await ovnSchemaPaths()).nb });
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await server?.stop();
  });

  it('equals a fresh dump of the server after every reconnection', async () => {
    const fast = { backoff: { initialMs: 20, maxMs: 200 }, inactivityProbeMs: 1000 };
    const writerClient = await OvsdbClient.connect(server.tcpRemote, fast);
    const reader = await OvsdbClient.connect(server.tcpRemote, fast);
    clients.push(writerClient, reader);
    await writerClient.transact(NB, new NorthboundTransaction().samplingApps().operations);
    const schema = await reader.getSchema(NB);
    const cache = new TableCache(schema, northboundSelection(schema));
    const decoder = new OvnSampleDecoder({ nbCache: cache });
    await reader.monitor(NB, cache);
    const writer = startBusyWriter(writerClient, 'pg_restart', 1);
    const syncs: OvsdbStatus[] = [];
    reader.on('status', (status) => status.state === 'synced' && syncs.push(status));

    let cycles = 0;
    for (let restart = 1; restart <= RESTARTS; restart++) {
      await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 150));
      const resynced = new Promise<void>((resolve) =>
        reader.once('status', function wait(status) {
          if (status.state === 'synced') resolve();
          else reader.once('status', wait);
        }),
      );
      await server.kill('SIGKILL');
      await server.start();
      await resynced;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 100));
      // The writer pauses so "equal" has one moment to be true at; changes in flight arrive first.
      await writer.pause();
      let mirror: unknown;
      let served: unknown;
      for (let attempt = 0; attempt < 100; attempt++) {
        served = await serverContent(writerClient, cache);
        mirror = cacheContent(cache);
        if (JSON.stringify(mirror) === JSON.stringify(served)) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(mirror, `after restart ${restart}`).toEqual(served);
      // And the decoder answers from it: every ACL the server holds decodes.
      for (const sample of cache.table('Sample').values()) {
        expect(decoder.decode((OVNK_SAMPLING_APP_IDS['acl-new'] << 24) >>> 0, Number(sample.metadata)).status).toBe('decoded');
      }
      cycles++;
      writer.resume();
    }
    const commits = await writer.stop();
    expect(cycles).toBe(RESTARTS);
    expect(reader.stats.sessions).toBe(RESTARTS + 1);
    expect(syncs).toHaveLength(RESTARTS);
    expect(commits).toBeGreaterThan(RESTARTS);
    expect(cache.stats).toMatchObject({ malformedRows: 0, failedListenerCalls: 0 });
  });
});
