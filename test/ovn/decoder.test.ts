import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OvnSampleDecoder } from '../../src/ovn/decoder';
import type { OvnSampleEvent } from '../../src/ovn/event';
import { formatOvnEvent } from '../../src/ovn/event-text';
import { flowPointId } from '../../src/ovn/cookie';
import type { PsampleMessage } from '../../src/psample/types';
import { eventually, startOvnDatabases, type OvnDatabases } from './support/ovn-databases';
import {
  adminNetworkPolicyAcl,
  adminNetworkPolicyPortGroupName,
  datapathBindingOp,
  dbObjectIds,
  DEFAULT_NETWORK_CONTROLLER,
  egressFirewallAcl,
  hashForOvn,
  logicalFlowOp,
  multicastClusterAcl,
  multicastNamespaceAcl,
  namespacePortGroupName,
  netpolNamespaceAcl,
  netpolNamespacePortGroupName,
  netpolNodeAcl,
  NorthboundTransaction,
  networkPolicyAcl,
  networkPolicyPortGroupIds,
  networkPolicyPortGroupName,
  sampleMetadataOf,
  udnIsolationAcl,
  udnSwitchName,
  type OvnkAcl,
} from './support/ovnk-fixtures';

/** The lab's Sampling_App ids, deliberately not ovn-kubernetes's 1/2/3: ids must be read, not assumed. */
const APPS = { drop: 44, 'acl-new': 42, 'acl-est': 43 } as const;
const NODE_KEY = 1;
const dropActions = `sample(probability=65535,collector_set=42,obs_domain=${APPS.drop},obs_point=$cookie); /* drop */`;
const UDN_KEY = 5;
const UDN_NETWORK = 'tenant-a.blue';

function domain(appId: number, datapathKey: number): number {
  return ((appId << 24) | datapathKey) >>> 0;
}

const acls = {
  npIngress: networkPolicyAcl({
    namespace: 'shop',
    policy: 'allow-web',
    direction: 'Ingress',
    peerMatch: 'ip4.src == {$a5154718082306775057}',
  }),
  npEgress: networkPolicyAcl({
    namespace: 'shop',
    policy: 'allow-web',
    direction: 'Egress',
    protocol: 'tcp',
    peerMatch: 'ip4.dst == 10.0.0.0/8 && tcp && tcp.dst==443',
  }),
  denyIngress: netpolNamespaceAcl({ namespace: 'shop', direction: 'Ingress', type: 'defaultDeny' }),
  arpIngress: netpolNamespaceAcl({ namespace: 'shop', direction: 'Ingress', type: 'arpAllow' }),
  node: netpolNodeAcl({ node: 'worker-1', managementIp: '10.244.1.2' }),
  anp: adminNetworkPolicyAcl({
    name: 'cluster-control',
    direction: 'Egress',
    gressIndex: 0,
    priority: 30000,
    peerMatch: 'ip4.dst == $a7',
    action: 'pass',
  }),
  banp: adminNetworkPolicyAcl({
    name: 'default',
    baseline: true,
    direction: 'Ingress',
    gressIndex: 1,
    priority: 1750,
    peerMatch: 'ip4.src == $a8',
    action: 'drop',
  }),
  multicastNs: multicastNamespaceAcl({ namespace: 'video', direction: 'Egress' }),
  multicastCluster: multicastClusterAcl({ type: 'DefaultDeny', direction: 'Ingress' }),
  egressFirewall: egressFirewallAcl({ namespace: 'video', ruleIndex: 0, destination: '8.8.8.8/32', action: 'drop' }),
  udnIsolation: udnIsolationAcl({ name: 'DenySecondary', direction: 'Egress' }),
};

/** An operator's own ACL: no Kubernetes owner, and a label, which overrides the Sample's point id. */
const labelled: OvnkAcl = {
  name: 'ops-debug',
  direction: 'from-lport',
  priority: 2000,
  match: 'ip4.dst == 192.0.2.10',
  action: 'allow-related',
  tier: 0,
  options: {},
  externalIds: {},
  label: 77,
};

const expectedMessages: Record<keyof typeof acls, string> = {
  npIngress: 'Allowed by network policy allow-web in namespace shop, direction Ingress',
  npEgress: 'Allowed by network policy allow-web in namespace shop, direction Egress',
  denyIngress: 'Dropped by network policies isolation in namespace shop, direction Ingress',
  arpIngress: 'Allowed by network policies isolation in namespace shop, direction Ingress',
  node: 'Allowed by default allow from local node policy, direction Ingress',
  anp: 'Delegated to network policy by admin network policy cluster-control, direction Egress',
  banp: 'Dropped by baseline admin network policy default, direction Ingress',
  multicastNs: 'Allowed by multicast in namespace video, direction Egress',
  multicastCluster: 'Dropped by cluster multicast policy, direction Ingress',
  egressFirewall: 'Dropped by egress firewall in namespace video',
  udnIsolation: 'Dropped by UDN isolation of type DenySecondary',
};

describe('OvnSampleDecoder against real OVN 25.03 NB and SB ovsdb-servers', () => {
  let dbs: OvnDatabases;
  let decoder: OvnSampleDecoder;
  const uuids: Partial<Record<keyof typeof acls | 'labelled' | 'duplicate' | 'nodeSwitch' | 'udnSwitch' | 'collector', string>> = {};
  const flows: { aclDrop?: string; portSecurity?: string; unhinted?: string } = {};

  beforeAll(async () => {
    dbs = await startOvnDatabases();
    const nb = new NorthboundTransaction();
    nb.samplingApps(APPS);
    const collector = nb.collector({ setId: 42 });
    const named = Object.fromEntries(Object.entries(acls).map(([key, acl]) => [key, nb.acl(acl, { collector })])) as Record<
      keyof typeof acls,
      string
    >;
    const labelledName = nb.acl(labelled, { collector });
    const duplicateName = nb.acl(acls.npIngress, { collector });
    const ids = (type: string, values: [string, string][]) => dbObjectIds(DEFAULT_NETWORK_CONTROLLER, type, values);
    nb.portGroup({
      name: networkPolicyPortGroupName('shop', 'allow-web'),
      externalIds: networkPolicyPortGroupIds('shop', 'allow-web'),
      acls: [named.npIngress, named.npEgress],
    });
    nb.portGroup({
      name: netpolNamespacePortGroupName('shop', 'Ingress'),
      externalIds: ids('NetpolNamespace', [
        ['k8s.ovn.org/name', 'shop'],
        ['direction', 'Ingress'],
      ]),
      acls: [named.denyIngress, named.arpIngress],
    });
    nb.portGroup({
      name: adminNetworkPolicyPortGroupName('cluster-control', false),
      externalIds: ids('AdminNetworkPolicy', [['k8s.ovn.org/name', 'cluster-control']]),
      acls: [named.anp],
    });
    nb.portGroup({
      name: adminNetworkPolicyPortGroupName('default', true),
      externalIds: ids('BaselineAdminNetworkPolicy', [['k8s.ovn.org/name', 'default']]),
      acls: [named.banp],
    });
    nb.portGroup({
      name: namespacePortGroupName('video'),
      externalIds: ids('Namespace', [['k8s.ovn.org/name', 'video']]),
      acls: [named.multicastNs, named.egressFirewall],
    });
    nb.portGroup({
      name: hashForOvn(`${DEFAULT_NETWORK_CONTROLLER}:Cluster:clusterPortGroup`),
      externalIds: ids('Cluster', [['k8s.ovn.org/name', 'clusterPortGroup']]),
      acls: [named.multicastCluster],
    });
    nb.portGroup({
      name: hashForOvn(`${DEFAULT_NETWORK_CONTROLLER}:UDNIsolation:SecondaryPods`),
      externalIds: ids('UDNIsolation', [['k8s.ovn.org/name', 'SecondaryPods']]),
      acls: [named.udnIsolation, duplicateName],
    });
    const nodeSwitch = nb.logicalSwitch({ name: 'worker-1', acls: [named.node, labelledName] });
    const udnSwitch = nb.logicalSwitch({
      name: udnSwitchName(UDN_NETWORK, 'worker-1'),
      network: UDN_NETWORK,
      topology: 'layer3',
      role: 'primary',
    });
    const nbResults = await dbs.nbWriter.transact('OVN_Northbound', nb.operations);
    for (const [key, name] of Object.entries(named)) {
      uuids[key as keyof typeof acls] = nb.uuidOf(nbResults, name);
    }
    uuids.labelled = nb.uuidOf(nbResults, labelledName);
    uuids.duplicate = nb.uuidOf(nbResults, duplicateName);
    uuids.nodeSwitch = nb.uuidOf(nbResults, nodeSwitch);
    uuids.udnSwitch = nb.uuidOf(nbResults, udnSwitch);
    uuids.collector = nb.uuidOf(nbResults, collector);

    const sbOps = [
      datapathBindingOp({ tunnelKey: NODE_KEY, logicalSwitchUuid: uuids.nodeSwitch, name: 'worker-1', uuidName: 'dp1' }),
      datapathBindingOp({
        tunnelKey: UDN_KEY,
        logicalSwitchUuid: uuids.udnSwitch,
        name: udnSwitchName(UDN_NETWORK, 'worker-1'),
        uuidName: 'dp5',
      }),
      logicalFlowOp({
        datapath: ['named-uuid', 'dp1'],
        pipeline: 'egress',
        tableId: 4,
        priority: 2000,
        match: `outport == @${netpolNamespacePortGroupName('shop', 'Ingress')} && ip`,
        actions: dropActions,
        stageName: 'ls_out_acl_eval',
        source: 'northd.c:7010',
        stageHintUuid: uuids.denyIngress,
      }),
      logicalFlowOp({
        datapath: ['named-uuid', 'dp1'],
        pipeline: 'ingress',
        tableId: 0,
        priority: 100,
        match: 'vlan.present',
        actions: dropActions,
        stageName: 'ls_in_check_port_sec',
        source: 'northd.c:9501',
        stageHintUuid: uuids.nodeSwitch,
      }),
      logicalFlowOp({
        datapath: ['named-uuid', 'dp5'],
        pipeline: 'ingress',
        tableId: 27,
        priority: 0,
        match: '1',
        actions: dropActions,
        stageName: 'ls_in_l2_unknown',
        source: 'northd.c:10400',
      }),
    ];
    const sbResults = (await dbs.sbWriter.transact('OVN_Southbound', sbOps)) as { uuid: [string, string] }[];
    flows.aclDrop = sbResults[2]!.uuid[1];
    flows.portSecurity = sbResults[3]!.uuid[1];
    flows.unhinted = sbResults[4]!.uuid[1];

    decoder = new OvnSampleDecoder({ nb: dbs.nb.tcpRemote, sb: dbs.sb.unixRemote });
    await decoder.start();
  });

  afterAll(async () => {
    await decoder?.close();
    await dbs?.stop();
  });

  it('answers "not synced" instead of guessing before start() finished', () => {
    const early = new OvnSampleDecoder({ nb: dbs.nb.unixRemote });
    const event = early.decode(domain(APPS['acl-new'], NODE_KEY), 1);
    expect(event).toMatchObject({ status: 'unknown', reason: 'not-synced' });
    expect(early.stats().unknown['not-synced']).toBe(1);
  });

  it.each(Object.keys(acls) as (keyof typeof acls)[])(
    "decodes acl-new and acl-est samples of the %s ACL with ovnkube-observ's message",
    (key) => {
      const acl = acls[key];
      for (const app of ['acl-new', 'acl-est'] as const) {
        const event = decoder.decode(domain(APPS[app], NODE_KEY), sampleMetadataOf(acl));
        expect(event.status).toBe('decoded');
        expect(event.app).toBe(app);
        expect(event.message).toBe(expectedMessages[key]);
        expect(event.action).toBe(acl.action);
        expect(event.acl).toEqual({
          uuid: key === 'npIngress' ? expect.any(String) : uuids[key],
          ...(acl.name === undefined ? {} : { name: acl.name }),
          priority: acl.priority,
          direction: acl.direction,
          match: acl.match,
          action: acl.action,
          tier: acl.tier,
          label: 0,
        });
        expect(event.owner?.type).toBe(acl.externalIds['k8s.ovn.org/owner-type']);
        expect(event.owner?.id).toBe(acl.externalIds['k8s.ovn.org/id']);
      }
    },
  );

  it('fills the structured owner per owner type', () => {
    const owner = (key: keyof typeof acls) => decoder.decode(domain(APPS['acl-new'], NODE_KEY), sampleMetadataOf(acls[key])).owner;
    expect(owner('npEgress')).toMatchObject({ type: 'NetworkPolicy', namespace: 'shop', name: 'allow-web', direction: 'Egress' });
    expect(owner('denyIngress')).toMatchObject({ type: 'NetpolNamespace', namespace: 'shop', direction: 'Ingress' });
    expect(owner('anp')).toMatchObject({ type: 'AdminNetworkPolicy', name: 'cluster-control', direction: 'Egress' });
    expect(owner('banp')).toMatchObject({ type: 'BaselineAdminNetworkPolicy', name: 'default', direction: 'Ingress' });
    expect(owner('multicastNs')).toMatchObject({ type: 'MulticastNS', namespace: 'video', direction: 'Egress' });
    expect(owner('multicastCluster')).toMatchObject({ type: 'MulticastCluster', direction: 'Ingress' });
    expect(owner('egressFirewall')).toMatchObject({ type: 'EgressFirewall', namespace: 'video', direction: 'Egress' });
    expect(owner('udnIsolation')).toMatchObject({ type: 'UDNIsolation', name: 'DenySecondary' });
    expect(owner('node')).toMatchObject({ type: 'NetpolNode', direction: 'Ingress', controller: DEFAULT_NETWORK_CONTROLLER });
  });

  it('reports every ACL that shares a Sample (identical ACLs get one Sample row)', () => {
    const event = decoder.decode(domain(APPS['acl-est'], NODE_KEY), sampleMetadataOf(acls.npIngress));
    expect(event.status).toBe('decoded');
    expect(new Set([event.acl?.uuid, ...(event.otherAcls ?? [])])).toEqual(new Set([uuids.npIngress, uuids.duplicate]));
  });

  it('decodes label ACLs: app bits 0 and the label as point id', () => {
    const event = decoder.decode(domain(0, NODE_KEY), 77);
    expect(event).toMatchObject({
      status: 'decoded',
      app: 'acl-label',
      appId: 0,
      message: 'Allowed by OVN ACL "ops-debug"',
      action: 'allow-related',
    });
    expect(event.acl).toMatchObject({ uuid: uuids.labelled, label: 77, tier: 0, priority: 2000 });
    expect(event.owner).toBeUndefined();
  });

  it('resolves the datapath to its switch and network: default, user-defined, unknown', () => {
    const point = sampleMetadataOf(acls.node);
    expect(decoder.decode(domain(APPS['acl-new'], NODE_KEY), point).datapath).toEqual({
      key: NODE_KEY,
      switch: 'worker-1',
      network: 'default',
    });
    expect(decoder.decode(domain(APPS['acl-new'], UDN_KEY), point).datapath).toEqual({
      key: UDN_KEY,
      switch: 'tenant.a.blue_worker-1',
      network: UDN_NETWORK,
      topology: 'layer3',
      role: 'primary',
    });
    const before = decoder.stats().unresolvedDatapaths;
    expect(decoder.decode(domain(APPS['acl-new'], 999), point).datapath).toEqual({ key: 999 });
    expect(decoder.stats().unresolvedDatapaths).toBe(before + 1);
  });

  it('decodes drop samples to the SB logical flow, its stage, source and stage-hint', () => {
    const aclDrop = decoder.decode(domain(APPS.drop, NODE_KEY), flowPointId(flows.aclDrop!));
    expect(aclDrop).toMatchObject({
      status: 'decoded',
      app: 'drop',
      action: 'drop',
      message: 'Dropped by network policies isolation in namespace shop, direction Ingress',
      owner: { type: 'NetpolNamespace', namespace: 'shop' },
      acl: { uuid: uuids.denyIngress },
      flow: {
        uuid: flows.aclDrop,
        stage: 'ls_out_acl_eval',
        source: 'northd.c:7010',
        pipeline: 'egress',
        table: 4,
        priority: 2000,
        hint: { hint: uuids.denyIngress!.slice(0, 8), table: 'ACL', uuid: uuids.denyIngress },
      },
    });
    const portSecurity = decoder.decode(domain(APPS.drop, NODE_KEY), flowPointId(flows.portSecurity!));
    expect(portSecurity.message).toBe(
      'Dropped by OVN logical flow in stage ls_in_check_port_sec (northd.c:9501), created for Logical_Switch worker-1',
    );
    expect(portSecurity.flow?.hint).toEqual({
      hint: uuids.nodeSwitch!.slice(0, 8),
      table: 'Logical_Switch',
      uuid: uuids.nodeSwitch,
      name: 'worker-1',
    });
    const unhinted = decoder.decode(domain(APPS.drop, UDN_KEY), flowPointId(flows.unhinted!));
    expect(unhinted).toMatchObject({
      status: 'decoded',
      message: 'Dropped by OVN logical flow in stage ls_in_l2_unknown (northd.c:10400)',
      datapath: { network: UDN_NETWORK },
    });
    expect(unhinted.flow?.hint).toBeUndefined();
  });

  it("reads a dropping flow's match and actions on demand, which the SB mirror does not hold", async () => {
    const [binding] = (await dbs.sbWriter.transact('OVN_Southbound', [
      { op: 'select', table: 'Datapath_Binding', where: [['tunnel_key', '==', UDN_KEY]] },
    ])) as [{ rows: { _uuid: [string, string] }[] }];
    const [inserted] = (await dbs.sbWriter.transact('OVN_Southbound', [
      logicalFlowOp({
        datapath: binding.rows[0]!._uuid,
        pipeline: 'egress',
        tableId: 9,
        priority: 80,
        match: 'eth.src == 0a:58:0a:00:00:01',
        actions: dropActions,
        stageName: 'ls_out_check_port_sec',
        source: 'northd.c:6389',
      }),
    ])) as [{ uuid: [string, string] }];
    const uuid = inserted.uuid[1];
    const point = flowPointId(uuid);
    // The first answer naming the flow cannot have its text yet: reading it has only started.
    const first = await eventually(() => {
      const event = decoder.decode(domain(APPS.drop, UDN_KEY), point);
      expect(event.flow?.uuid).toBe(uuid);
      return event;
    });
    expect(first.flow).toMatchObject({ stage: 'ls_out_check_port_sec', pipeline: 'egress', table: 9, priority: 80 });
    expect(first.flow?.match).toBeUndefined();
    // Whoever keeps answers (listen's JSON renderer) must not keep this one: it is completed later.
    expect(decoder.holds(first)).toBe(false);
    const detailed = await decoder.decodeWithDetails(domain(APPS.drop, UDN_KEY), point);
    expect(detailed.flow).toMatchObject({ match: 'eth.src == 0a:58:0a:00:00:01', actions: dropActions });
    expect(decoder.decode(domain(APPS.drop, UDN_KEY), point).flow).toBe(detailed.flow);
    expect(decoder.holds(detailed)).toBe(true);
  });

  it('renders drop and stale events as text, flow and stage-hint included', async () => {
    const drop = formatOvnEvent(await decoder.decodeWithDetails(domain(APPS.drop, NODE_KEY), flowPointId(flows.portSecurity!))).split('\n');
    expect(drop[0]).toBe(
      'OVN-K message: Dropped by OVN logical flow in stage ls_in_check_port_sec (northd.c:9501), created for Logical_Switch worker-1',
    );
    expect(drop).toContain(
      `  flow: ${flows.portSecurity} ls_in_check_port_sec (northd.c:9501) ingress table 0 priority 100: vlan.present => sample(probability=65535,collector_set=42,obs_domain=${APPS.drop},obs_point=$cookie); /* drop */`,
    );
    expect(drop).toContain(`  stage-hint: ${uuids.nodeSwitch!.slice(0, 8)} Logical_Switch worker-1`);
    const stale = formatOvnEvent(decoder.decode(domain(APPS['acl-new'], NODE_KEY), 4242)).split('\n');
    expect(stale[0]).toMatch(/^stale \(sample-not-found\): Stale sample: no Sample has metadata 4242/);
    expect(stale[1]).toBe(`  sample: acl-new (app ${APPS['acl-new']}), obs_domain_id 0x2a000001, obs_point_id 4242 (0x00001092)`);
  });

  it('counts cookies it cannot read, per reason, and never throws', () => {
    const before = decoder.stats();
    expect(decoder.decode(domain(99, NODE_KEY), 1)).toMatchObject({ status: 'unknown', reason: 'unknown-app', appId: 99 });
    expect(decoder.decodeCookie(new Uint8Array(16))).toMatchObject({ status: 'unknown', reason: 'not-ovn-cookie' });
    expect(decoder.decode(domain(APPS.drop, NODE_KEY), 0x01020304)).toMatchObject({ status: 'stale', reason: 'flow-not-found' });
    expect(decoder.decode(domain(APPS['acl-new'], NODE_KEY), 4242)).toMatchObject({ status: 'stale', reason: 'sample-not-found' });
    expect(decoder.decode(domain(0, NODE_KEY), 78)).toMatchObject({ status: 'stale', reason: 'acl-not-found' });
    expect(decoder.decode(Number.NaN, -1)).toMatchObject({ obsDomainId: 0, obsPointId: 0xffffffff });
    const after = decoder.stats();
    expect(after.unknown['unknown-app']).toBe(before.unknown['unknown-app'] + 1);
    expect(after.unknown['not-ovn-cookie']).toBe(before.unknown['not-ovn-cookie'] + 1);
    expect(after.stale['flow-not-found']).toBe(before.stale['flow-not-found'] + 1);
    expect(after.stale['sample-not-found']).toBe(before.stale['sample-not-found'] + 1);
    expect(after.stale['acl-not-found']).toBe(before.stale['acl-not-found'] + 2);
  });

  it('decodes a psample message by its 8-byte user cookie', () => {
    const metadata = sampleMetadataOf(acls.banp);
    const cookie = new Uint8Array(8);
    new DataView(cookie.buffer).setUint32(0, domain(APPS['acl-new'], NODE_KEY));
    new DataView(cookie.buffer).setUint32(4, metadata);
    const message: PsampleMessage = {
      command: 'sample',
      group: 10,
      groupSeq: 0,
      iifindex: 4,
      origSize: 98,
      rate: 0xffffffff,
      probability: true,
      timestampNs: 0n,
      proto: 0x0800,
      data: new Uint8Array(98),
      userCookie: cookie,
    };
    expect(decoder.decodeSample(message).message).toBe(expectedMessages.banp);
    expect(decoder.decodeSample({ ...message, userCookie: undefined })).toMatchObject({ status: 'unknown', reason: 'not-ovn-cookie' });
  });

  it('follows live changes: edited rules, new and deleted policies, reconfigured apps; stale samples keep what was known', async () => {
    const oldPoint = sampleMetadataOf(acls.npEgress);
    const edited = networkPolicyAcl({
      namespace: 'shop',
      policy: 'allow-web',
      direction: 'Egress',
      protocol: 'tcp',
      peerMatch: 'ip4.dst == 10.0.0.0/8 && tcp && tcp.dst==8443',
    });
    const newPoint = sampleMetadataOf(edited);
    expect(newPoint).not.toBe(oldPoint);
    const update = new NorthboundTransaction().updateAclRule(uuids.npEgress!, edited, { collector: { uuid: uuids.collector! } });
    await dbs.nbWriter.transact('OVN_Northbound', update.operations);
    const fresh = await eventually(() => {
      const event = decoder.decode(domain(APPS['acl-new'], NODE_KEY), newPoint);
      expect(event.status).toBe('decoded');
      return event;
    });
    expect(fresh.acl).toMatchObject({ uuid: uuids.npEgress, match: edited.match });
    // The established connection still carries the old point id in conntrack.
    const stale = decoder.decode(domain(APPS['acl-est'], NODE_KEY), oldPoint);
    expect(stale).toMatchObject({ status: 'stale', reason: 'sample-not-found', app: 'acl-est' });
    expect(stale.previous).toMatchObject({ message: expectedMessages.npEgress, acl: { uuid: uuids.npEgress, match: acls.npEgress.match } });
    expect(stale.message).toContain(expectedMessages.npEgress);

    const added = networkPolicyAcl({ namespace: 'shop', policy: 'allow-db', direction: 'Ingress', peerMatch: 'ip4.src == {$a9}' });
    const create = new NorthboundTransaction();
    const addedName = create.acl(added, { collector: { uuid: uuids.collector! } });
    create.portGroup({
      name: networkPolicyPortGroupName('shop', 'allow-db'),
      externalIds: networkPolicyPortGroupIds('shop', 'allow-db'),
      acls: [addedName],
    });
    await dbs.nbWriter.transact('OVN_Northbound', create.operations);
    await eventually(() =>
      expect(decoder.decode(domain(APPS['acl-new'], NODE_KEY), sampleMetadataOf(added)).message).toBe(
        'Allowed by network policy allow-db in namespace shop, direction Ingress',
      ),
    );

    await dbs.nbWriter.transact('OVN_Northbound', [
      { op: 'delete', table: 'Port_Group', where: [['name', '==', networkPolicyPortGroupName('shop', 'allow-db')]] },
    ]);
    const gone = await eventually(() => {
      const event = decoder.decode(domain(APPS['acl-est'], NODE_KEY), sampleMetadataOf(added));
      expect(event.status).toBe('stale');
      return event;
    });
    expect(gone.previous?.message).toBe('Allowed by network policy allow-db in namespace shop, direction Ingress');

    await dbs.nbWriter.transact('OVN_Northbound', [
      { op: 'update', table: 'Sampling_App', where: [['type', '==', 'acl-new']], row: { id: 2 } },
    ]);
    await eventually(() => expect(decoder.decode(domain(2, NODE_KEY), sampleMetadataOf(acls.banp)).message).toBe(expectedMessages.banp));
    expect(decoder.decode(domain(APPS['acl-new'], NODE_KEY), sampleMetadataOf(acls.banp))).toMatchObject({
      status: 'unknown',
      reason: 'unknown-app',
    });
  });

  it('answers a cookie it has answered with the same frozen event until a database changes, and counts every sample', async () => {
    const point = sampleMetadataOf(acls.anp);
    const before = decoder.stats().decoded;
    const first = decoder.decode(domain(APPS['acl-est'], NODE_KEY), point);
    expect(decoder.decode(domain(APPS['acl-est'], NODE_KEY), point)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(decoder.stats().decoded).toBe(before + 2);
    expect(decoder.holds(first)).toBe(true);
    expect(decoder.holds({ ...first })).toBe(false);
    const notOvn = decoder.decodeCookie(new Uint8Array(3));
    expect(decoder.holds(notOvn)).toBe(true);
    let changes = 0;
    const counted = (): void => void changes++;
    decoder.on('change', counted);
    const setPriority = (priority: number): Promise<unknown> =>
      dbs.nbWriter.transact('OVN_Northbound', [
        { op: 'update', table: 'ACL', where: [['_uuid', '==', ['uuid', uuids.anp!]]], row: { priority } },
      ]);
    await setPriority(29999);
    await eventually(() => expect(changes).toBeGreaterThan(0));
    decoder.off('change', counted);
    // Answers given before a change are not vouched for after it; what does not depend on the databases still is.
    expect(decoder.holds(first)).toBe(false);
    expect(decoder.holds(notOvn)).toBe(true);
    await eventually(() => expect(decoder.decode(domain(APPS['acl-est'], NODE_KEY), point).acl?.priority).toBe(29999));
    await setPriority(first.acl!.priority);
    await eventually(() => expect(decoder.decode(domain(APPS['acl-est'], NODE_KEY), point)).toEqual(first));
    expect(decoder.decode(domain(APPS['acl-est'], NODE_KEY), point)).not.toBe(first);
  });

  it('follows in-place ACL updates that keep the point id (an ANP rule moved to another priority)', async () => {
    const point = sampleMetadataOf(acls.anp);
    expect(decoder.decode(domain(APPS['acl-est'], NODE_KEY), point).acl?.priority).toBe(30000);
    await dbs.nbWriter.transact('OVN_Northbound', [
      { op: 'update', table: 'ACL', where: [['_uuid', '==', ['uuid', uuids.anp!]]], row: { priority: 25000 } },
    ]);
    await eventually(() => expect(decoder.decode(domain(APPS['acl-est'], NODE_KEY), point).acl?.priority).toBe(25000));
    expect(decoder.decode(domain(APPS['acl-est'], NODE_KEY), point)).toMatchObject({ status: 'decoded', message: expectedMessages.anp });
  });

  it('follows live datapath changes (a switch moving to a user-defined network)', async () => {
    const point = sampleMetadataOf(acls.node);
    await dbs.nbWriter.transact('OVN_Northbound', [
      {
        op: 'update',
        table: 'Logical_Switch',
        where: [['_uuid', '==', ['uuid', uuids.nodeSwitch!]]],
        row: {
          external_ids: [
            'map',
            [
              ['k8s.ovn.org/network', 'green'],
              ['k8s.ovn.org/topology', 'layer2'],
              ['k8s.ovn.org/role', 'secondary'],
            ],
          ],
        },
      },
    ]);
    await eventually(() =>
      expect(decoder.decode(domain(APPS['acl-est'], NODE_KEY), point).datapath).toEqual({
        key: NODE_KEY,
        switch: 'worker-1',
        network: 'green',
        topology: 'layer2',
        role: 'secondary',
      }),
    );
  });

  it('keeps answering from its mirror while the northbound server is down, and re-syncs after it returns', async () => {
    const point = sampleMetadataOf(acls.multicastCluster);
    await dbs.nb.kill('SIGKILL');
    expect(decoder.decode(domain(APPS['acl-est'], NODE_KEY), point).message).toBe(expectedMessages.multicastCluster);
    await dbs.nb.start();
    const added = adminNetworkPolicyAcl({
      name: 'after-restart',
      direction: 'Ingress',
      gressIndex: 0,
      priority: 29000,
      peerMatch: 'ip4.src == $a11',
      action: 'allow-related',
    });
    const create = new NorthboundTransaction();
    const addedName = create.acl(added, { collector: { uuid: uuids.collector! } });
    create.portGroup({
      name: adminNetworkPolicyPortGroupName('after-restart', false),
      externalIds: dbObjectIds(DEFAULT_NETWORK_CONTROLLER, 'AdminNetworkPolicy', [['k8s.ovn.org/name', 'after-restart']]),
      acls: [addedName],
    });
    await dbs.nbWriter.transact('OVN_Northbound', create.operations);
    await eventually(
      () =>
        expect(decoder.decode(domain(APPS['acl-est'], NODE_KEY), sampleMetadataOf(added)).message).toBe(
          'Allowed by admin network policy after-restart, direction Ingress',
        ),
      'the decoder to re-sync after the restart',
    );
    expect(decoder.decode(domain(APPS['acl-est'], NODE_KEY), point).message).toBe(expectedMessages.multicastCluster);
  });

  it('without the southbound database, still decodes ACLs and says why drops cannot be named', async () => {
    const nbOnly = new OvnSampleDecoder({ nb: dbs.nb.unixRemote });
    await nbOnly.start();
    try {
      const event: OvnSampleEvent = nbOnly.decode(domain(APPS['acl-est'], NODE_KEY), sampleMetadataOf(acls.egressFirewall));
      expect(event).toMatchObject({ status: 'decoded', message: expectedMessages.egressFirewall, datapath: { key: NODE_KEY } });
      expect(event.datapath.switch).toBeUndefined();
      expect(nbOnly.decode(domain(APPS.drop, NODE_KEY), flowPointId(flows.aclDrop!))).toMatchObject({
        status: 'unknown',
        reason: 'no-southbound',
      });
      expect(nbOnly.stats().unknown['no-southbound']).toBe(1);
    } finally {
      await nbOnly.close();
    }
  });
});
