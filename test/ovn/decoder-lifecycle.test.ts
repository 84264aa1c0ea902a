import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OvsdbClosedError } from '../../src/errors';
import { TableCache } from '../../src/ovsdb/cache';
import { OvsdbClient } from '../../src/ovsdb/client';
import { OvnSampleDecoder } from '../../src/ovn/decoder';
import { northboundSelection, southboundSelection } from '../../src/ovn/selection';
import { serverMonitorCount } from '../support/ovsdb-server';
import { eventually, startOvnDatabases, type OvnDatabases } from './support/ovn-databases';
import {
  networkPolicyAcl,
  networkPolicyPortGroupIds,
  networkPolicyPortGroupName,
  NorthboundTransaction,
  sampleMetadataOf,
} from './support/ovnk-fixtures';

const APPS = { drop: 44, 'acl-new': 42, 'acl-est': 43 } as const;
const ALLOW_WEB = 'Allowed by network policy allow-web in namespace shop, direction Ingress';

function domain(appId: number, datapathKey: number): number {
  return ((appId << 24) | datapathKey) >>> 0;
}

describe('OvnSampleDecoder start/close life cycle against real OVN NB and SB ovsdb-servers', () => {
  let dbs: OvnDatabases;
  const acl = networkPolicyAcl({ namespace: 'shop', policy: 'allow-web', direction: 'Ingress', peerMatch: 'ip4.src == {$a1}' });
  let aclUuid: string;
  /** Monitors the writers hold: what the servers count when no decoder is left. */
  let baseline: { nb: number; sb: number };

  async function monitors(): Promise<{ nb: number; sb: number }> {
    return { nb: await serverMonitorCount(dbs.nb), sb: await serverMonitorCount(dbs.sb) };
  }

  beforeAll(async () => {
    dbs = await startOvnDatabases();
    const nb = new NorthboundTransaction();
    nb.samplingApps(APPS);
    const collector = nb.collector({ setId: 42 });
    const named = nb.acl(acl, { collector });
    nb.portGroup({
      name: networkPolicyPortGroupName('shop', 'allow-web'),
      externalIds: networkPolicyPortGroupIds('shop', 'allow-web'),
      acls: [named],
    });
    aclUuid = nb.uuidOf(await dbs.nbWriter.transact('OVN_Northbound', nb.operations), named);
    baseline = await monitors();
  });

  afterAll(async () => {
    await dbs?.stop();
  });

  it('close() during start(): start() rejects with OvsdbClosedError and no connection is left behind', async () => {
    const decoder = new OvnSampleDecoder({ nb: dbs.nb.tcpRemote, sb: dbs.sb.unixRemote });
    const starting = decoder.start();
    await decoder.close();
    await expect(starting).rejects.toBeInstanceOf(OvsdbClosedError);
    // A client that finished connecting after close() would keep its _Server and database monitors.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await monitors()).toEqual(baseline);
    expect(decoder.decode(domain(APPS['acl-new'], 1), sampleMetadataOf(acl))).toMatchObject({ status: 'unknown', reason: 'not-synced' });
  });

  it('start() after close() connects again and decodes', async () => {
    const decoder = new OvnSampleDecoder({ nb: dbs.nb.tcpRemote, sb: dbs.sb.unixRemote });
    try {
      await decoder.start();
      await decoder.close();
      expect(await monitors()).toEqual(baseline);
      await decoder.start();
      expect(decoder.decode(domain(APPS['acl-new'], 1), sampleMetadataOf(acl))).toMatchObject({ status: 'decoded', message: ALLOW_WEB });
    } finally {
      await decoder.close();
    }
  });

  it('close() cancels the monitors it put on clients the caller passed in, and leaves them open', async () => {
    const nbClient = await OvsdbClient.connect(dbs.nb.unixRemote);
    const sbClient = await OvsdbClient.connect(dbs.sb.unixRemote);
    try {
      const before = await monitors();
      for (let attempt = 0; attempt < 2; attempt++) {
        const decoder = new OvnSampleDecoder({ nb: nbClient, sb: sbClient });
        await decoder.start();
        expect(await monitors()).toEqual({ nb: before.nb + 1, sb: before.sb + 1 });
        await decoder.close();
        expect(await monitors()).toEqual(before);
      }
      expect(nbClient.connected && sbClient.connected).toBe(true);
      expect(nbClient.listenerCount('status') + nbClient.listenerCount('error')).toBe(0);
    } finally {
      await Promise.all([nbClient.close(), sbClient.close()]);
    }
  });

  it('close() takes its listeners off caches the caller passed in; start() puts them back', async () => {
    const nbSchema = await dbs.nbWriter.getSchema('OVN_Northbound');
    const sbSchema = await dbs.sbWriter.getSchema('OVN_Southbound');
    const nbCache = new TableCache(nbSchema, northboundSelection(nbSchema));
    const sbCache = new TableCache(sbSchema, southboundSelection(sbSchema));
    await dbs.nbWriter.monitor('OVN_Northbound', nbCache);
    try {
      const decoder = new OvnSampleDecoder({ nbCache, sbCache });
      expect(nbCache.listenerCount('change')).toBeGreaterThan(0);
      await decoder.close();
      expect([nbCache.listenerCount('change'), nbCache.listenerCount('batch'), sbCache.listenerCount('change')]).toEqual([0, 0, 0]);
      await decoder.start();
      expect(decoder.decode(domain(APPS['acl-est'], 1), sampleMetadataOf(acl))).toMatchObject({ status: 'decoded', message: ALLOW_WEB });
      await decoder.close();
    } finally {
      await dbs.nbWriter.unmonitor(nbCache);
    }
  });

  it('remembers what a Sample meant when its metadata is renumbered in place', async () => {
    const decoder = new OvnSampleDecoder({ nb: dbs.nb.unixRemote });
    try {
      await decoder.start();
      const oldPoint = sampleMetadataOf(acl);
      const newPoint = oldPoint + 1;
      await dbs.nbWriter.transact('OVN_Northbound', [
        { op: 'update', table: 'Sample', where: [['metadata', '==', oldPoint]], row: { metadata: newPoint } },
      ]);
      await eventually(() =>
        expect(decoder.decode(domain(APPS['acl-est'], 1), newPoint)).toMatchObject({ status: 'decoded', message: ALLOW_WEB }),
      );
      const stale = decoder.decode(domain(APPS['acl-est'], 1), oldPoint);
      expect(stale).toMatchObject({
        status: 'stale',
        reason: 'sample-not-found',
        previous: { message: ALLOW_WEB, acl: { uuid: aclUuid } },
      });
      expect(stale.message).toContain(ALLOW_WEB);
    } finally {
      await decoder.close();
    }
  });
});
