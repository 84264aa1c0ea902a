import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OvnSchemaUnsupportedError, OvsdbSchemaError } from '../../src/errors';
import { OvnSampleDecoder } from '../../src/ovn/decoder';
import { northboundSelection, southboundSelection } from '../../src/ovn/selection';
import { OvsdbClient } from '../../src/ovsdb/client';
import { TableCache } from '../../src/ovsdb/cache';
import { parseSchema, type DatabaseSchema } from '../../src/ovsdb/schema';
import { ovnSchemaPaths } from '../support/ovn-schemas';
import { eventually, startOvnDatabases, type OvnDatabases } from './support/ovn-databases';
import {
  multicastNamespaceAcl,
  namespacePortGroupName,
  NorthboundTransaction,
  OVNK_SAMPLING_APP_IDS,
  sampleMetadataOf,
} from './support/ovnk-fixtures';

async function realSchemas(): Promise<{ nb: Record<string, unknown>; sb: Record<string, unknown> }> {
  const paths = await ovnSchemaPaths();
  return {
    nb: JSON.parse(await readFile(paths.nb, 'utf8')) as Record<string, unknown>,
    sb: JSON.parse(await readFile(paths.sb, 'utf8')) as Record<string, unknown>,
  };
}

function withoutTable(schema: Record<string, unknown>, table: string): DatabaseSchema {
  const tables = { ...(schema.tables as Record<string, unknown>) };
  delete tables[table];
  return parseSchema({ ...schema, version: '7.3.0', tables });
}

describe('schema requirements', () => {
  it('selects only what exists in the real OVN 25.03 schemas', async () => {
    const { nb, sb } = await realSchemas();
    const nbSelection = northboundSelection(parseSchema(nb));
    expect(Object.keys(nbSelection).sort()).toEqual(
      [
        'ACL',
        'Logical_Router',
        'Logical_Router_Port',
        'Logical_Switch',
        'Logical_Switch_Port',
        // Drop sampling's settings (issue 18): northd's domain without a drop Sampling_App, ovn-controller's without SB.
        'NB_Global',
        'Port_Group',
        'Sample',
        'Sampling_App',
      ].sort(),
    );
    // SB_Global: ovn-controller's drop sampling settings and the OVN release that names its tables (issue 18).
    expect(Object.keys(southboundSelection(parseSchema(sb))).sort()).toEqual(['Datapath_Binding', 'Logical_Flow', 'SB_Global']);
  });

  it('refuses a northbound database from before OVN sampling, saying what to upgrade', async () => {
    const { nb } = await realSchemas();
    const old = withoutTable(nb, 'Sampling_App');
    expect(() => northboundSelection(old)).toThrow(OvnSchemaUnsupportedError);
    expect(() => northboundSelection(old)).toThrow(/lacks Sampling_App.*OVN 24\.09 or newer/);
  });

  it('refuses a cache built without the indexes the decoder looks samples up by', async () => {
    const schema = parseSchema((await realSchemas()).nb);
    const selection = northboundSelection(schema);
    const unindexed = new TableCache(schema, { ...selection, Sample: { columns: ['metadata'] } });
    expect(() => new OvnSampleDecoder({ nbCache: unindexed })).toThrow(OvsdbSchemaError);
    const partial = new TableCache(schema, { ACL: { columns: ['match'] } });
    expect(() => new OvnSampleDecoder({ nbCache: partial })).toThrow(/build it with northboundSelection/);
  });
});

describe('OvnSampleDecoder over caches the caller feeds', () => {
  let dbs: OvnDatabases;
  let reader: OvsdbClient;

  beforeAll(async () => {
    dbs = await startOvnDatabases();
    reader = await OvsdbClient.connect(dbs.nb.unixRemote);
  });

  afterAll(async () => {
    await reader?.close();
    await dbs?.stop();
  });

  it('decodes at once from an already-synced cache, and follows it afterwards', async () => {
    const acl = multicastNamespaceAcl({ namespace: 'media', direction: 'Ingress', addressSet: 'a42' });
    const nb = new NorthboundTransaction();
    nb.samplingApps();
    const collector = nb.collector();
    nb.portGroup({ name: namespacePortGroupName('media'), externalIds: {}, acls: [nb.acl(acl, { collector })] });
    await dbs.nbWriter.transact('OVN_Northbound', nb.operations);

    const schema = await reader.getSchema('OVN_Northbound');
    const cache = new TableCache(schema, northboundSelection(schema));
    await reader.monitor('OVN_Northbound', cache);
    const decoder = new OvnSampleDecoder({ nbCache: cache });
    await decoder.start();
    const domain = ((OVNK_SAMPLING_APP_IDS['acl-new'] << 24) | 3) >>> 0;
    expect(decoder.decode(domain, sampleMetadataOf(acl)).message).toBe('Allowed by multicast in namespace media, direction Ingress');

    await dbs.nbWriter.transact('OVN_Northbound', [
      { op: 'delete', table: 'Port_Group', where: [['name', '==', namespacePortGroupName('media')]] },
    ]);
    await eventually(() =>
      expect(decoder.decode(domain, sampleMetadataOf(acl))).toMatchObject({
        status: 'stale',
        previous: { message: 'Allowed by multicast in namespace media, direction Ingress' },
      }),
    );
    await decoder.close();
  });

  it('works over a client the caller owns, and leaves it open on close()', async () => {
    const acl = multicastNamespaceAcl({ namespace: 'radio', direction: 'Egress' });
    const nb = new NorthboundTransaction();
    const collector = nb.collector({ id: 9, setId: 9 });
    nb.portGroup({ name: namespacePortGroupName('radio'), externalIds: {}, acls: [nb.acl(acl, { collector })] });
    await dbs.nbWriter.transact('OVN_Northbound', nb.operations);
    const decoder = new OvnSampleDecoder({ nb: reader });
    await decoder.start();
    expect(decoder.decode(((OVNK_SAMPLING_APP_IDS['acl-est'] << 24) | 2) >>> 0, sampleMetadataOf(acl)).message).toBe(
      'Allowed by multicast in namespace radio, direction Egress',
    );
    await decoder.close();
    expect(reader.connected).toBe(true);
    expect(reader.listenerCount('status')).toBe(0);
  });
});
