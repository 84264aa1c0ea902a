import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OvsdbConnectionError, OvsdbDisconnectedError } from '../../src/errors';
import type { TableCache } from '../../src/ovsdb/cache';
import { OvsdbClient, type OvsdbResync, type OvsdbStatus } from '../../src/ovsdb/client';
import { SharedMirror } from '../../src/ovsdb/shared-mirror';
import { OvnSampleDecoder } from '../../src/ovn/decoder';
import { PodDirectory } from '../../src/ovn/pod-directory';
import { NORTHBOUND_DATABASE } from '../../src/ovn/selection';
import { cookieOf, NODE, PODS, startOvnkNodeDatabases, UDN, UDN_POD, type OvnkNodeDatabases, type Pod } from '../cli/support/ovnk-node';
import { cacheContent, serverContent, startBusyWriter } from '../ovsdb/nb-helpers';
import { newerNbSchemaPath } from '../support/ovn-schemas';
import { serverMonitorCount } from '../support/ovsdb-server';
import { eventually } from './support/ovn-databases';
import { OVNK_SAMPLING_APP_IDS } from './support/ovnk-fixtures';

const run = promisify(execFile);
const NB = NORTHBOUND_DATABASE;
const FAST = { backoff: { initialMs: 20, maxMs: 200 }, inactivityProbeMs: 1000 };
const ALLOW_FRONTEND = 'Allowed by network policy allow-frontend in namespace shop, direction Ingress';

const hex = (byte: number): string => (byte & 255).toString(16).padStart(2, '0');

/** Pod `index` of churn `churn`: a name and an address of its own, in no node subnet. */
function churnPod(churn: number, index: number): Pod {
  return {
    namespace: 'churn',
    name: `c${churn}-${index}`,
    ip: `10.${250 + churn}.${(index >> 8) & 255}.${index & 255}`,
    mac: `0a:58:${hex(churn)}:00:${hex(index >> 8)}:${hex(index)}`,
  };
}

/** A pod started on the node switch (10.244.0.0/24) once. */
function nodePod(name: string, lastOctet: number): Pod {
  return { namespace: 'shop', name, ip: `10.244.0.${lastOctet}`, mac: `0a:58:0a:f4:00:${hex(lastOctet)}` };
}

/** The decoder and the pod directory as `ovn-psample watch` starts them: on one client, in one turn. */
async function startTogether(client: OvsdbClient, sb: OvsdbClient): Promise<{ decoder: OvnSampleDecoder; pods: PodDirectory }> {
  const decoder = new OvnSampleDecoder({ nb: client, sb });
  const [pods] = await Promise.all([PodDirectory.follow(client), decoder.start()]);
  return { decoder, pods };
}

/** The client's shared northbound mirror, read by a reader that reads nothing of its own. */
async function mirrorOf(client: OvsdbClient): Promise<{ cache: TableCache; leave: () => Promise<void> }> {
  const probe = SharedMirror.join(client, NB, {});
  const cache = await probe.cache;
  await probe.synced;
  return { cache, leave: () => probe.leave() };
}

/** Every pod port the server holds resolves to its pod, and every Sample it holds decodes: both readers agree with the server. */
async function expectBothFollowTheServer(writer: OvsdbClient, decoder: OvnSampleDecoder, pods: PodDirectory): Promise<void> {
  const [ports, samples] = (await writer.transact(NB, [
    { op: 'select', table: 'Logical_Switch_Port', where: [['name', 'includes', 'churn_']], columns: ['name', 'addresses'] },
    { op: 'select', table: 'Sample', where: [], columns: ['metadata'] },
  ])) as [{ rows: { name: string; addresses: string }[] }, { rows: { metadata: number }[] }];
  for (const { name, addresses } of ports.rows) {
    const ip = addresses.split(' ')[1]!;
    expect(pods.resolve('default', ip), name).toMatchObject({ kind: 'pod', namespace: 'churn', name: name.slice('churn_'.length) });
  }
  for (const { metadata } of samples.rows) {
    expect(decoder.decode(((OVNK_SAMPLING_APP_IDS['acl-new'] << 24) | 1) >>> 0, metadata).status, `Sample ${metadata}`).toBe('decoded');
  }
}

/** Adds and removes pod ports through `client` back to back, as pods come and go on a busy node, until stopped. */
function startPodChurn(client: OvsdbClient, churn: number): { pause(): Promise<void>; resume(): void; stop(): Promise<void> } {
  let running = true;
  let gate: Promise<void> | undefined;
  let open = (): void => undefined;
  let idle = (): void => undefined;
  const step = async (index: number): Promise<void> => {
    const added = churnPod(churn, index);
    await client.transact(NB, [
      {
        op: 'insert',
        table: 'Logical_Switch_Port',
        'uuid-name': 'port',
        row: {
          name: `${added.namespace}_${added.name}`,
          addresses: `${added.mac} ${added.ip}`,
          external_ids: [
            'map',
            [
              ['namespace', added.namespace],
              ['pod', 'true'],
            ],
          ],
        },
      },
      {
        op: 'mutate',
        table: 'Logical_Switch',
        where: [['name', '==', NODE]],
        mutations: [['ports', 'insert', ['set', [['named-uuid', 'port']]]]],
      },
    ]);
    if (index < 5) return;
    const gone = churnPod(churn, index - 5);
    const [found] = (await client.transact(NB, [
      { op: 'select', table: 'Logical_Switch_Port', where: [['name', '==', `${gone.namespace}_${gone.name}`]], columns: ['_uuid'] },
    ])) as [{ rows: { _uuid: [string, string] }[] }];
    await client.transact(NB, [
      {
        op: 'mutate',
        table: 'Logical_Switch',
        where: [['name', '==', NODE]],
        mutations: [['ports', 'delete', ['set', found.rows.map((row) => row._uuid)]]],
      },
    ]);
  };
  const loop = (async () => {
    for (let index = 0; running; index++) {
      if (gate !== undefined) {
        idle();
        await gate;
      }
      try {
        await step(index);
      } catch (error) {
        // A transaction lost to a restart is not retried; the next step writes another pod.
        if (!(error instanceof OvsdbDisconnectedError || error instanceof OvsdbConnectionError)) throw error;
      }
    }
    idle();
  })();
  return {
    pause: () => {
      gate ??= new Promise((resolve) => (open = resolve));
      return new Promise((resolve) => (idle = resolve));
    },
    resume: () => {
      gate = undefined;
      open();
    },
    stop: async () => {
      running = false;
      gate = undefined;
      open();
      await loop;
    },
  };
}

describe('one northbound mirror shared by the decoder and the pod directory (real OVN 25.03 ovsdb-servers)', () => {
  let dbs: OvnkNodeDatabases;
  const clients: OvsdbClient[] = [];

  async function connect(remote: string): Promise<OvsdbClient> {
    const client = await OvsdbClient.connect(remote, FAST);
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    dbs = await startOvnkNodeDatabases();
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await dbs?.stop();
  });

  it('started together, as the CLI starts them, they make one monitor and one initial sync; each leaves without disturbing the other', async () => {
    const [nb, sb] = await Promise.all([connect(dbs.nb.unixRemote), connect(dbs.sb.unixRemote)]);
    const before = await serverMonitorCount(dbs.nb);
    const syncs: OvsdbStatus[] = [];
    nb.on('status', (status) => status.state === 'synced' && syncs.push(status));
    const { decoder, pods } = await startTogether(nb, sb);
    expect(await serverMonitorCount(dbs.nb)).toBe(before + 1);
    expect(syncs).toHaveLength(1);
    expect(decoder.stats().resyncs).toBe(0);
    expect(decoder.decodeCookie(cookieOf('allowFrontend'))).toMatchObject({ status: 'decoded', message: ALLOW_FRONTEND });
    expect(pods.resolve('default', PODS.frontend.ip)).toMatchObject({ kind: 'pod', namespace: 'shop', name: 'frontend' });
    expect(pods.resolve(UDN, UDN_POD.ip)).toMatchObject({ kind: 'pod', namespace: 'blue', name: 'web', network: UDN });

    await decoder.close();
    expect(await serverMonitorCount(dbs.nb)).toBe(before + 1);
    const started = nodePod('started', 200);
    await dbs.addPod(started);
    await eventually(() => expect(pods.resolve('default', started.ip)).toMatchObject({ kind: 'pod', name: 'started' }));
    await dbs.removePod(started);
    await eventually(() => expect(pods.resolve('default', started.ip).kind).toBe('cluster'));
    await pods.close();
    expect(await serverMonitorCount(dbs.nb)).toBe(before);
    expect(nb.connected).toBe(true);
  });

  it("a pod directory following a client whose decoder is synced widens the decoder's mirror: one reload, reported as a resync", async () => {
    const [nb, sb] = await Promise.all([connect(dbs.nb.tcpRemote), connect(dbs.sb.unixRemote)]);
    const decoder = new OvnSampleDecoder({ nb, sb });
    const resyncs: [string, OvsdbResync][] = [];
    decoder.on('resync', (database, resync) => resyncs.push([database, resync]));
    await decoder.start();
    const before = await serverMonitorCount(dbs.nb);
    const pods = await PodDirectory.follow(nb);
    expect(await serverMonitorCount(dbs.nb)).toBe(before);
    expect(resyncs).toEqual([[NB, { database: NB, reason: 'selection-widened', remote: dbs.nb.tcpRemote }]]);
    expect(decoder.stats().resyncs).toBe(1);
    expect(decoder.decodeCookie(cookieOf('isolation'))).toMatchObject({ status: 'decoded' });
    expect(pods.resolve('default', PODS.backend.ip)).toMatchObject({ kind: 'pod', name: 'backend' });
    const { cache, leave } = await mirrorOf(nb);
    expect(cacheContent(cache)).toEqual(await serverContent(dbs.nbWriter, cache));
    await Promise.all([leave(), pods.close(), decoder.close()]);
    expect(await serverMonitorCount(dbs.nb)).toBe(before - 1);
  });

  it('a reader that closes from inside a change of the shared mirror leaves the other following it', async () => {
    const [nb, sb] = await Promise.all([connect(dbs.nb.unixRemote), connect(dbs.sb.unixRemote)]);
    const before = await serverMonitorCount(dbs.nb);
    const { decoder, pods } = await startTogether(nb, sb);
    let closing: Promise<void> | undefined;
    decoder.once('change', () => {
      closing = pods.close();
    });
    const first = nodePod('during-close', 202);
    await dbs.addPod(first);
    await eventually(() => expect(closing).toBeDefined());
    await closing;
    expect(await serverMonitorCount(dbs.nb)).toBe(before + 1);
    // The decoder still follows the mirror; the pod directory no longer does.
    await dbs.nbWriter.transact(NB, [{ op: 'update', table: 'Sampling_App', where: [['type', '==', 'acl-new']], row: { id: 200 } }]);
    await eventually(() => expect(decoder.decode(((200 << 24) | 1) >>> 0, 1).reason).not.toBe('unknown-app'));
    await dbs.nbWriter.transact(NB, [
      { op: 'update', table: 'Sampling_App', where: [['type', '==', 'acl-new']], row: { id: OVNK_SAMPLING_APP_IDS['acl-new'] } },
    ]);
    await eventually(() => expect(decoder.decodeCookie(cookieOf('allowFrontend')).status).toBe('decoded'));
    // And the other way round: the decoder closes inside its own change; a new pod directory shares what is left.
    const again = await PodDirectory.follow(nb);
    decoder.once('change', () => void decoder.close());
    await dbs.removePod(first);
    await eventually(async () => expect(await serverMonitorCount(dbs.nb)).toBe(before + 1));
    await eventually(() => expect(again.resolve('default', first.ip).kind).toBe('cluster'));
    await again.close();
    expect(await serverMonitorCount(dbs.nb)).toBe(before);
  });

  it('started while writers commit (policies and pods), the shared mirror ends equal to the server, and both readers with it', async () => {
    const writer = await connect(dbs.nb.unixRemote);
    const policies = startBusyWriter(writer, 'pg_shared', 5_000_000);
    const churn = startPodChurn(writer, 1);
    const [nb, sb] = await Promise.all([connect(dbs.nb.unixRemote), connect(dbs.sb.unixRemote)]);
    const { decoder, pods } = await startTogether(nb, sb);
    await Promise.all([policies.pause(), churn.pause()]);
    const { cache, leave } = await mirrorOf(nb);
    await eventually(async () => expect(cacheContent(cache)).toEqual(await serverContent(writer, cache)));
    await expectBothFollowTheServer(writer, decoder, pods);
    await Promise.all([policies.stop(), churn.stop()]);
    await Promise.all([leave(), pods.close(), decoder.close()]);
  });

  it('after a divergence the shared mirror is reloaded once, and both readers follow the reload', async () => {
    const [nb, sb] = await Promise.all([connect(dbs.nb.unixRemote), connect(dbs.sb.unixRemote)]);
    const { decoder, pods } = await startTogether(nb, sb);
    const resyncs: OvsdbResync[] = [];
    decoder.on('resync', (_database, resync) => resyncs.push(resync));
    const { cache, leave } = await mirrorOf(nb);
    const [port] = cache.table('Logical_Switch_Port').values();
    // Behind the monitor's back: the mirror loses a port the server still has.
    cache.applyUpdate2({ Logical_Switch_Port: { [port!._uuid]: { delete: null } } });
    await dbs.nbWriter.transact(NB, [
      {
        op: 'mutate',
        table: 'Logical_Switch_Port',
        where: [['_uuid', '==', ['uuid', port!._uuid]]],
        mutations: [['external_ids', 'insert', ['map', [['touched', 'yes']]]]],
      },
    ]);
    await eventually(() => expect(resyncs).toEqual([{ database: NB, reason: 'inconsistent', remote: dbs.nb.unixRemote }]));
    await eventually(async () => expect(cacheContent(cache)).toEqual(await serverContent(dbs.nbWriter, cache)));
    expect(pods.resolve('default', PODS.db.ip)).toMatchObject({ kind: 'pod', name: 'db' });
    expect(decoder.decodeCookie(cookieOf('anpPass'))).toMatchObject({ status: 'decoded' });
    await Promise.all([leave(), pods.close(), decoder.close()]);
  });

  it('across kill -9 and restarts of the northbound server while pods churn, both readers end equal to the server after each', async () => {
    const [nb, sb] = await Promise.all([connect(dbs.nb.tcpRemote), connect(dbs.sb.unixRemote)]);
    const { decoder, pods } = await startTogether(nb, sb);
    const { cache, leave } = await mirrorOf(nb);
    const writer = await connect(dbs.nb.unixRemote);
    const churn = startPodChurn(writer, 2);
    for (let restart = 1; restart <= 5; restart++) {
      await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 150));
      const resynced = new Promise<void>((resolve) => nb.on('status', (status) => status.state === 'synced' && resolve()));
      await dbs.nb.kill('SIGKILL');
      await dbs.nb.start();
      await resynced;
      await churn.pause();
      await eventually(async () => expect(cacheContent(cache), `after restart ${restart}`).toEqual(await serverContent(writer, cache)));
      await expectBothFollowTheServer(writer, decoder, pods);
      churn.resume();
    }
    await churn.stop();
    expect(cache.stats).toMatchObject({ malformedRows: 0, failedListenerCalls: 0 });
    await Promise.all([leave(), pods.close(), decoder.close()]);
  });

  it('an OVN upgrade converting the database to a newer schema reloads the shared mirror once; both readers go on', async () => {
    const newer = await newerNbSchemaPath();
    const [nb, sb] = await Promise.all([connect(dbs.nb.unixRemote), connect(dbs.sb.unixRemote)]);
    const { decoder, pods } = await startTogether(nb, sb);
    const resyncs: OvsdbResync[] = [];
    const errors: Error[] = [];
    decoder.on('resync', (_database, resync) => resyncs.push(resync));
    decoder.on('error', (error) => errors.push(error));
    await run('ovsdb-client', ['convert', dbs.nb.unixRemote, newer.nb]);
    await eventually(() => expect(resyncs).toEqual([{ database: NB, reason: 'schema-changed', remote: dbs.nb.unixRemote }]));
    const upgraded = nodePod('after-upgrade', 201);
    await dbs.addPod(upgraded);
    await eventually(() => expect(pods.resolve('default', upgraded.ip)).toMatchObject({ kind: 'pod', name: 'after-upgrade' }));
    expect(decoder.decodeCookie(cookieOf('egressFirewall'))).toMatchObject({ status: 'decoded' });
    expect(errors).toEqual([]);
    await Promise.all([pods.close(), decoder.close()]);
  });
});
