import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OvsdbResync, OvsdbStatus } from '../../src/ovsdb/client';
import { OvnSampleDecoder } from '../../src/ovn/decoder';
import { newerNbSchemaPath } from '../support/ovn-schemas';
import { eventually, startOvnDatabases, type OvnDatabases } from './support/ovn-databases';
import {
  networkPolicyAcl,
  networkPolicyPortGroupIds,
  networkPolicyPortGroupName,
  NorthboundTransaction,
  sampleMetadataOf,
  type OvnkAcl,
} from './support/ovnk-fixtures';

const run = promisify(execFile);
const APPS = { drop: 44, 'acl-new': 42, 'acl-est': 43 } as const;

function domain(appId: number, datapathKey: number): number {
  return ((appId << 24) | datapathKey) >>> 0;
}

async function addPolicy(dbs: OvnDatabases, acl: OvnkAcl, policy: string, first: boolean): Promise<void> {
  const nb = new NorthboundTransaction();
  if (first) {
    nb.samplingApps(APPS);
  }
  const collector = nb.collector({ id: first ? 1 : 2, setId: 42 });
  const named = nb.acl(acl, { collector });
  nb.portGroup({ name: networkPolicyPortGroupName('shop', policy), externalIds: networkPolicyPortGroupIds('shop', policy), acls: [named] });
  await dbs.nbWriter.transact('OVN_Northbound', nb.operations);
}

describe('an OVN upgrade converting the live NB database to a newer schema (ovsdb-client convert)', () => {
  let dbs: OvnDatabases;
  let newer: { nb: string; provenance: string };
  const before = networkPolicyAcl({ namespace: 'shop', policy: 'before', direction: 'Ingress', peerMatch: 'ip4.src == {$a1}' });
  const after = networkPolicyAcl({ namespace: 'shop', policy: 'after', direction: 'Egress', peerMatch: 'ip4.dst == {$a2}' });

  beforeAll(async () => {
    newer = await newerNbSchemaPath();
    dbs = await startOvnDatabases();
    await addPolicy(dbs, before, 'before', true);
  });

  afterAll(async () => {
    await dbs?.stop();
  });

  it('is followed by a live decoder: schema re-read, re-monitored, no error, no reconnection', async () => {
    const decoder = new OvnSampleDecoder({ nb: dbs.nb.unixRemote, sb: dbs.sb.tcpRemote });
    const errors: Error[] = [];
    const statuses: [string, OvsdbStatus][] = [];
    const resyncs: [string, OvsdbResync][] = [];
    decoder.on('error', (error) => errors.push(error));
    decoder.on('status', (database, status) => statuses.push([database, status]));
    decoder.on('resync', (database, resync) => resyncs.push([database, resync]));
    try {
      await decoder.start();
      expect(decoder.decode(domain(APPS['acl-new'], 1), sampleMetadataOf(before))).toMatchObject({
        status: 'decoded',
        message: 'Allowed by network policy before in namespace shop, direction Ingress',
      });

      const { stdout: versionBefore } = await run('ovsdb-client', ['get-schema-version', dbs.nb.unixRemote, 'OVN_Northbound']);
      await run('ovsdb-client', ['convert', dbs.nb.unixRemote, newer.nb]);
      const { stdout: versionAfter } = await run('ovsdb-client', ['get-schema-version', dbs.nb.unixRemote, 'OVN_Northbound']);
      expect(versionAfter.trim(), newer.provenance).not.toBe(versionBefore.trim());

      await eventually(() =>
        expect(resyncs).toEqual([['OVN_Northbound', { database: 'OVN_Northbound', reason: 'schema-changed', remote: dbs.nb.unixRemote }]]),
      );
      await eventually(() => expect(statuses.at(-1)).toMatchObject(['OVN_Northbound', { state: 'synced', resumed: false }]));

      // Rows written after the conversion reach the decoder; the ones from before still decode.
      await addPolicy(dbs, after, 'after', false);
      await eventually(() =>
        expect(decoder.decode(domain(APPS['acl-est'], 1), sampleMetadataOf(after))).toMatchObject({
          status: 'decoded',
          message: 'Allowed by network policy after in namespace shop, direction Egress',
        }),
      );
      expect(decoder.decode(domain(APPS['acl-new'], 1), sampleMetadataOf(before))).toMatchObject({ status: 'decoded' });

      expect(errors).toEqual([]);
      expect(statuses.filter(([, status]) => status.state === 'disconnected' || status.state === 'connecting')).toEqual([]);
      expect(decoder.stats().resyncs).toBe(1);
    } finally {
      await decoder.close();
    }
  });
});
