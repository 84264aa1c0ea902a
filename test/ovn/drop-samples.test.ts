import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flowPointId } from '../../src/ovn/cookie';
import { OvnSampleDecoder } from '../../src/ovn/decoder';
import { formatOvnEvent } from '../../src/ovn/event-text';
import { eventually, startOvnDatabases, type OvnDatabases } from './support/ovn-databases';
import { cliOutput } from '../support/cli';
import { datapathBindingOp, logicalFlowOp, NorthboundTransaction } from './support/ovnk-fixtures';

// OVN's two kinds of drop samples (issue 18), against real NB and SB ovsdb-servers on OVN 25.03's
// schemas, set up as ovn-northd and ovn-controller leave them (facts from ovn-org/ovn v25.03.0):
// - ovn-northd's drop flows sample with obs_domain = (domain << 24) | datapath key, obs_point = the
//   first 32 bits of the Logical_Flow's UUID, domain = the Sampling_App of type drop, or without
//   one NB_Global options:debug_drop_domain_id (northd/debug.c init_debug_config);
// - ovn-controller's own drops (controller/physical.c put_drop) sample with obs_domain =
//   SB_Global options:debug_drop_domain_id << 24 (datapath key 0) and obs_point = the OpenFlow table.

/** The lab's Sampling_App ids: the drop app (44) differs from debug_drop_domain_id (1), as it may on a real node. */
const APPS = { drop: 44, 'acl-new': 42, 'acl-est': 43 } as const;
const DOMAIN = 1;
const COLLECTOR_SET = 42;
const NODE_KEY = 3;
const VERSION_25_03 = '25.03.0-20.41.0-78.0';
const CHECK_LOOPBACK =
  'Dropped by ovn-controller in OpenFlow table 44 (OFTABLE_CHECK_LOOPBACK: it would leave through the logical port it came in on (or from a localport through a localnet port))';

const domainOf = (appId: number, datapathKey: number): number => ((appId << 24) | datapathKey) >>> 0;
const options = (values: Record<string, string>): unknown => ['map', Object.entries(values)];

describe("OVN's drop samples, ovn-northd's and ovn-controller's (real OVN 25.03 NB and SB ovsdb-servers)", () => {
  let dbs: OvnDatabases;
  let decoder: OvnSampleDecoder;
  let flow: string;

  /** Sets debug drop sampling as an operator does on NB_Global, and as ovn-northd copies it to SB_Global. */
  async function setDropSampling(nb: Record<string, string>, sb: Record<string, string> = nb): Promise<void> {
    await Promise.all([
      dbs.nbWriter.transact('OVN_Northbound', [{ op: 'update', table: 'NB_Global', where: [], row: { options: options(nb) } }]),
      dbs.sbWriter.transact('OVN_Southbound', [{ op: 'update', table: 'SB_Global', where: [], row: { options: options(sb) } }]),
    ]);
  }

  const settings = (domain = DOMAIN, version = VERSION_25_03): Record<string, string> => ({
    debug_drop_collector_set: String(COLLECTOR_SET),
    debug_drop_domain_id: String(domain),
    northd_internal_version: version,
  });

  beforeAll(async () => {
    dbs = await startOvnDatabases();
    const nb = new NorthboundTransaction();
    nb.samplingApps(APPS);
    const node = nb.logicalSwitch({ name: 'worker-1' });
    nb.operations.push({ op: 'insert', table: 'NB_Global', row: { options: options(settings()) } });
    const results = await dbs.nbWriter.transact('OVN_Northbound', nb.operations);
    const sb = (await dbs.sbWriter.transact('OVN_Southbound', [
      { op: 'insert', table: 'SB_Global', row: { options: options(settings()) } },
      datapathBindingOp({ tunnelKey: NODE_KEY, logicalSwitchUuid: nb.uuidOf(results, node), name: 'worker-1', uuidName: 'dp' }),
      {
        ...logicalFlowOp({
          datapath: ['named-uuid', 'dp'],
          pipeline: 'ingress',
          tableId: 29,
          priority: 50,
          match: 'outport == "none"',
          actions: `sample(probability=65535,collector_set=${COLLECTOR_SET},obs_domain=${APPS.drop},obs_point=$cookie); /* drop */`,
          stageName: 'ls_in_l2_unknown',
          source: 'northd.c:9308',
        }),
      },
    ])) as { uuid: [string, string] }[];
    flow = sb[2]!.uuid[1];
    await dbs.sbWriter.transact('OVN_Southbound', [
      { op: 'update', table: 'Logical_Flow', where: [['_uuid', '==', ['uuid', flow]]], row: { flow_desc: 'No L2 destination' } },
    ]);
    decoder = new OvnSampleDecoder({ nb: dbs.nb.unixRemote, sb: dbs.sb.unixRemote });
    await decoder.start();
  });

  afterAll(async () => {
    await decoder?.close();
    await dbs?.stop();
  });

  it("names ovn-controller's drop in its own table (cookie 010000000000002c) with the table of its release, never stale", async () => {
    const before = decoder.stats();
    const event = await decoder.decodeWithDetails(domainOf(DOMAIN, 0), 44);
    expect(event).toEqual({
      status: 'decoded',
      obsDomainId: 0x01000000,
      obsPointId: 44,
      appId: DOMAIN,
      app: 'drop',
      action: 'drop',
      message: CHECK_LOOPBACK,
      openflowTable: {
        table: 44,
        release: '25.03',
        name: 'OFTABLE_CHECK_LOOPBACK',
        description: 'it would leave through the logical port it came in on (or from a localport through a localnet port)',
      },
      datapath: { key: 0 },
    });
    expect(decoder.decodeCookie(Buffer.from('010000000000002c', 'hex'))).toBe(event);
    expect(decoder.holds(event)).toBe(true);
    const after = decoder.stats();
    expect(after.decoded).toBe(before.decoded + 2);
    expect(after.stale).toEqual(before.stale);
    expect(after.unresolvedDatapaths).toBe(before.unresolvedDatapaths);
    expect(formatOvnEvent(event).split('\n')).toEqual([
      `OVN-K message: ${CHECK_LOOPBACK}`,
      '  sample: drop (app 1), obs_domain_id 0x01000000, obs_point_id 44 (0x0000002c)',
      "  datapath: key 0, (no logical datapath has key 0: the key of ovn-controller's own drops)",
      '  openflow table: 44 OFTABLE_CHECK_LOOPBACK (OVN 25.03): it would leave through the logical port it came in on (or from a localport through a localnet port)',
    ]);
    for (const [table, name] of [
      [0, 'OFTABLE_PHY_TO_LOG'],
      [43, 'OFTABLE_LOCAL_OUTPUT'],
      [65, 'OFTABLE_LOG_TO_PHY'],
    ] as const) {
      expect(decoder.decode(domainOf(DOMAIN, 0), table).openflowTable).toMatchObject({ table, name });
    }
  });

  it("names ovn-northd's drop flow: datapath, pipeline, stage, source and its description", () => {
    const event = decoder.decode(domainOf(APPS.drop, NODE_KEY), flowPointId(flow));
    expect(event).toMatchObject({
      status: 'decoded',
      app: 'drop',
      action: 'drop',
      message: 'Dropped by OVN logical flow in stage ls_in_l2_unknown (northd.c:9308): No L2 destination',
      datapath: { key: NODE_KEY, switch: 'worker-1', network: 'default' },
      flow: {
        uuid: flow,
        pipeline: 'ingress',
        table: 29,
        priority: 50,
        stage: 'ls_in_l2_unknown',
        source: 'northd.c:9308',
        description: 'No L2 destination',
      },
    });
    expect(event.openflowTable).toBeUndefined();
  });

  it('names tables by the release northd_internal_version gives, and only numbers them when the release or the table is not known', async () => {
    await setDropSampling(settings(DOMAIN, '25.09.1-21.5.0-80.0'));
    await eventually(() =>
      expect(decoder.decode(domainOf(DOMAIN, 0), 46).openflowTable).toMatchObject({ name: 'OFTABLE_CHECK_LOOPBACK', release: '25.09' }),
    );
    expect(decoder.decode(domainOf(DOMAIN, 0), 44)).toMatchObject({
      status: 'decoded',
      openflowTable: { table: 44, release: '25.09' },
      message: "Dropped by ovn-controller in OpenFlow table 44 (not named: OVN 25.09's ovn-controller drops in no table of that number)",
    });
    await setDropSampling(settings(DOMAIN, '26.03.0-21.9.0-81.0'));
    await eventually(() =>
      expect(decoder.decode(domainOf(DOMAIN, 0), 44).message).toBe(
        'Dropped by ovn-controller in OpenFlow table 44 (not named: the tables of OVN 26.03 are not known to this version of ovn-psample)',
      ),
    );
    const unversioned = settings();
    delete unversioned.northd_internal_version;
    await setDropSampling(unversioned);
    await eventually(() =>
      expect(decoder.decode(domainOf(DOMAIN, 0), 44)).toMatchObject({
        status: 'decoded',
        openflowTable: { table: 44 },
        message:
          'Dropped by ovn-controller in OpenFlow table 44 (not named: the OVN release is unknown (no northd_internal_version in NB_Global or SB_Global options))',
      }),
    );
    await setDropSampling(settings());
    await eventually(() => expect(decoder.decode(domainOf(DOMAIN, 0), 44).message).toBe(CHECK_LOOPBACK));
  });

  it("takes ovn-controller's domain from SB_Global, which may differ from NB_Global's until northd copies it", async () => {
    await setDropSampling(settings(DOMAIN), settings(7));
    await eventually(() => expect(decoder.decode(domainOf(7, 0), 44).message).toBe(CHECK_LOOPBACK));
    await eventually(() => expect(decoder.decode(domainOf(DOMAIN, 0), 44)).toMatchObject({ status: 'unknown', reason: 'unknown-app' }));
    await setDropSampling(settings());
    await eventually(() => expect(decoder.decode(domainOf(DOMAIN, 0), 44).status).toBe('decoded'));
  });

  it("decodes northd's drop flows sampled with NB_Global's debug_drop_domain_id when there is no Sampling_App of type drop", async () => {
    await dbs.nbWriter.transact('OVN_Northbound', [{ op: 'delete', table: 'Sampling_App', where: [['type', '==', 'drop']] }]);
    await eventually(() =>
      expect(decoder.decode(domainOf(DOMAIN, NODE_KEY), flowPointId(flow))).toMatchObject({
        status: 'decoded',
        app: 'drop',
        flow: { uuid: flow, stage: 'ls_in_l2_unknown' },
      }),
    );
    // The controller's drops, same domain, datapath key 0, still name a table.
    expect(decoder.decode(domainOf(DOMAIN, 0), 44).message).toBe(CHECK_LOOPBACK);
    // Without a domain id either, both sample with app 0, which label ACLs use too: those are looked for first.
    const noDomain = settings();
    delete noDomain.debug_drop_domain_id;
    await setDropSampling(noDomain);
    await eventually(() =>
      expect(decoder.decode(domainOf(0, NODE_KEY), flowPointId(flow))).toMatchObject({ status: 'decoded', flow: { uuid: flow } }),
    );
    expect(decoder.decode(domainOf(0, 0), 44).message).toBe(CHECK_LOOPBACK);
    expect(decoder.decode(domainOf(0, NODE_KEY), 77)).toMatchObject({ status: 'stale', reason: 'flow-not-found' });
    // Without drop sampling on, that domain is no app at all.
    await setDropSampling({ debug_drop_domain_id: String(DOMAIN), northd_internal_version: VERSION_25_03 });
    await eventually(() =>
      expect(decoder.decode(domainOf(DOMAIN, NODE_KEY), flowPointId(flow))).toMatchObject({ status: 'unknown', reason: 'unknown-app' }),
    );
    await eventually(() => expect(decoder.decode(domainOf(DOMAIN, 0), 44)).toMatchObject({ status: 'unknown', reason: 'unknown-app' }));
    await setDropSampling(settings());
    await dbs.nbWriter.transact('OVN_Northbound', [{ op: 'insert', table: 'Sampling_App', row: { type: 'drop', id: APPS.drop } }]);
    await eventually(() => expect(decoder.decode(domainOf(APPS.drop, NODE_KEY), flowPointId(flow)).status).toBe('decoded'));
  });

  it("with the northbound database alone, still names ovn-controller's drops from NB_Global's settings", async () => {
    const nbOnly = new OvnSampleDecoder({ nb: dbs.nb.tcpRemote });
    await nbOnly.start();
    try {
      expect(nbOnly.decode(domainOf(DOMAIN, 0), 44).message).toBe(CHECK_LOOPBACK);
      expect(nbOnly.decode(domainOf(APPS.drop, NODE_KEY), flowPointId(flow))).toMatchObject({ status: 'unknown', reason: 'no-southbound' });
    } finally {
      await nbOnly.close();
    }
  });

  it('ovn-psample decode --cookie 010000000000002c prints the table, not a stale flow', () => {
    const output = cliOutput(['decode', '--cookie', '010000000000002c', '--nb', dbs.nb.unixRemote, '--sb', dbs.sb.unixRemote]);
    expect(JSON.parse(output).event).toMatchObject({
      status: 'decoded',
      message: CHECK_LOOPBACK,
      openflowTable: { table: 44, name: 'OFTABLE_CHECK_LOOPBACK' },
    });
  });
});
