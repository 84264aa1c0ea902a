/**
 * Builds RFC 7047 transact operations that write OVN northbound/southbound rows the way
 * ovn-kubernetes (go-controller, libovsdb ops) and ovn-northd write them: external_ids keys and
 * k8s.ovn.org/id layouts per owner type, ACL names, tiers, priorities, apply-after-lb options,
 * hashed port group names, and one Sample per ACL whose metadata is FNV-32a(id + match + action),
 * shared by sample_new and sample_est.
 */
import { aclSampleMetadata } from '../../../src/ovn/sample-id';

export type OvsdbOperation = Record<string, unknown>;
export type Direction = 'Ingress' | 'Egress';
type Pipeline = 'to-lport' | 'from-lport' | 'from-lport-after-lb';

export const DEFAULT_NETWORK_CONTROLLER = 'default-network-controller';
/** ovn-kubernetes's Sampling_App ids (pkg/observability): drop 1, acl-new 2, acl-est 3. */
export const OVNK_SAMPLING_APP_IDS = { drop: 1, 'acl-new': 2, 'acl-est': 3 } as const;
const DEFAULT_ACL_TIER = 2;
const ANP_ACL_TIER = 1;
const BANP_ACL_TIER = 3;
const DEFAULT_ALLOW_PRIORITY = 1001;
const DEFAULT_DENY_PRIORITY = 1000;
const MCAST_ALLOW_PRIORITY = 1012;
const MCAST_DENY_PRIORITY = 1011;
const EGRESS_FIREWALL_START_PRIORITY = 10000;

const FNV64_OFFSET_BASIS = 0xcbf29ce484222325n;
const FNV64_PRIME = 0x100000001b3n;

/** ovn-kubernetes's util.HashForOVN: "a" + decimal FNV-64a, used for port group names. */
export function hashForOvn(text: string): string {
  let hash = FNV64_OFFSET_BASIS;
  for (const byte of new TextEncoder().encode(text)) {
    hash = BigInt.asUintN(64, (hash ^ BigInt(byte)) * FNV64_PRIME);
  }
  return `a${hash.toString()}`;
}

/** An ACL as ovn-kubernetes's libovsdbutil.BuildACL produces it. */
export interface OvnkAcl {
  readonly name?: string;
  readonly direction: 'to-lport' | 'from-lport';
  readonly priority: number;
  readonly match: string;
  readonly action: string;
  readonly tier: number;
  readonly options: Readonly<Record<string, string>>;
  readonly externalIds: Readonly<Record<string, string>>;
  readonly label?: number;
}

/**
 * external_ids for owner `ownerType`: owner-controller, owner-type, the object ids, and
 * k8s.ovn.org/id = controller:ownerType:<object id values in the type's key order>.
 */
export function dbObjectIds(
  controller: string,
  ownerType: string,
  objectIds: readonly (readonly [string, string])[],
): Record<string, string> {
  const ids: Record<string, string> = {
    'k8s.ovn.org/owner-controller': controller,
    'k8s.ovn.org/owner-type': ownerType,
  };
  for (const [key, value] of objectIds) {
    ids[key] = value;
  }
  ids['k8s.ovn.org/id'] = [controller, ownerType, ...objectIds.map(([, value]) => value)].join(':');
  return ids;
}

function buildAcl(
  externalIds: Record<string, string>,
  name: string,
  priority: number,
  match: string,
  action: string,
  pipeline: Pipeline,
  tier = DEFAULT_ACL_TIER,
): OvnkAcl {
  return {
    ...(name === '' ? {} : { name: name.slice(0, 63) }),
    direction: pipeline === 'to-lport' ? 'to-lport' : 'from-lport',
    priority,
    match,
    action,
    tier,
    options: pipeline === 'from-lport-after-lb' ? { 'apply-after-lb': 'true' } : {},
    externalIds,
  };
}

function pipelineOf(direction: Direction): Pipeline {
  return direction === 'Ingress' ? 'to-lport' : 'from-lport-after-lb';
}

/** libovsdbutil.GetACLMatch: the port group side first, then the rule's match. */
export function portGroupMatch(portGroup: string, match: string, direction: Direction): string {
  const side = direction === 'Ingress' ? `outport == @${portGroup}` : `inport == @${portGroup}`;
  return match === '' ? side : `${side} && ${match}`;
}

export function networkPolicyPortGroupName(namespace: string, policy: string, controller = DEFAULT_NETWORK_CONTROLLER): string {
  return hashForOvn(`${controller}:NetworkPolicy:${namespace}:${policy}`);
}

/** A NetworkPolicy gress rule ACL (gress_policy.go: ACLNetworkPolicy ids, name "NP:ns:name:Dir:idx"). */
export function networkPolicyAcl(spec: {
  namespace: string;
  policy: string;
  direction: Direction;
  gressIndex?: number;
  protocol?: string;
  ipBlockIndex?: number;
  peerMatch: string;
  action?: 'allow-related' | 'allow-stateless';
  controller?: string;
}): OvnkAcl {
  const controller = spec.controller ?? DEFAULT_NETWORK_CONTROLLER;
  const gressIndex = String(spec.gressIndex ?? 0);
  const ids = dbObjectIds(controller, 'NetworkPolicy', [
    ['k8s.ovn.org/name', `${spec.namespace}:${spec.policy}`],
    ['direction', spec.direction],
    ['gress-index', gressIndex],
    ['port-policy-protocol', spec.protocol ?? 'None'],
    ['ip-block-index', String(spec.ipBlockIndex ?? -1)],
  ]);
  const portGroup = networkPolicyPortGroupName(spec.namespace, spec.policy, controller);
  const lport = spec.direction === 'Ingress' ? `outport == @${portGroup}` : `inport == @${portGroup}`;
  return buildAcl(
    ids,
    `NP:${spec.namespace}:${spec.policy}:${spec.direction}:${gressIndex}`,
    DEFAULT_ALLOW_PRIORITY,
    `${spec.peerMatch} && ${lport}`,
    spec.action ?? 'allow-related',
    pipelineOf(spec.direction),
  );
}

export function netpolNamespacePortGroupName(namespace: string, direction: Direction, controller = DEFAULT_NETWORK_CONTROLLER): string {
  return hashForOvn(`${controller}:NetpolNamespace:${namespace}:${direction}`);
}

/** The namespace's default-deny or ARP-allow ACL that isolates pods selected by any policy. */
export function netpolNamespaceAcl(spec: {
  namespace: string;
  direction: Direction;
  type: 'defaultDeny' | 'arpAllow';
  controller?: string;
}): OvnkAcl {
  const controller = spec.controller ?? DEFAULT_NETWORK_CONTROLLER;
  const ids = dbObjectIds(controller, 'NetpolNamespace', [
    ['k8s.ovn.org/name', spec.namespace],
    ['direction', spec.direction],
    ['type', spec.type],
  ]);
  const portGroup = netpolNamespacePortGroupName(spec.namespace, spec.direction, controller);
  return spec.type === 'defaultDeny'
    ? buildAcl(
        ids,
        `NP:${spec.namespace}:${spec.direction}`,
        DEFAULT_DENY_PRIORITY,
        portGroupMatch(portGroup, '', spec.direction),
        'drop',
        pipelineOf(spec.direction),
      )
    : buildAcl(
        ids,
        `NP:${spec.namespace}:${spec.direction}`,
        DEFAULT_ALLOW_PRIORITY,
        portGroupMatch(portGroup, '(arp || nd)', spec.direction),
        'allow',
        pipelineOf(spec.direction),
      );
}

/** The node switch's allow-from-management-port ACL (addAllowACLFromNode). */
export function netpolNodeAcl(spec: { node: string; managementIp: string; controller?: string }): OvnkAcl {
  const family = spec.managementIp.includes(':') ? 'ip6' : 'ip4';
  const ids = dbObjectIds(spec.controller ?? DEFAULT_NETWORK_CONTROLLER, 'NetpolNode', [
    ['k8s.ovn.org/name', spec.node],
    ['ip', spec.managementIp],
  ]);
  return buildAcl(ids, '', DEFAULT_ALLOW_PRIORITY, `${family}.src==${spec.managementIp}`, 'allow-related', 'to-lport');
}

export function adminNetworkPolicyPortGroupName(name: string, baseline: boolean, controller = DEFAULT_NETWORK_CONTROLLER): string {
  return hashForOvn(`${controller}:${baseline ? 'BaselineAdminNetworkPolicy' : 'AdminNetworkPolicy'}:${name}`);
}

/** An (Baseline)AdminNetworkPolicy rule ACL: tier 1 for ANP, 3 for BANP. */
export function adminNetworkPolicyAcl(spec: {
  name: string;
  baseline?: boolean;
  direction: Direction;
  gressIndex: number;
  protocol?: string;
  priority: number;
  peerMatch: string;
  action: 'allow-related' | 'drop' | 'pass';
  controller?: string;
}): OvnkAcl {
  const baseline = spec.baseline === true;
  const ownerType = baseline ? 'BaselineAdminNetworkPolicy' : 'AdminNetworkPolicy';
  const controller = spec.controller ?? DEFAULT_NETWORK_CONTROLLER;
  const ids = dbObjectIds(controller, ownerType, [
    ['k8s.ovn.org/name', spec.name],
    ['direction', spec.direction],
    ['gress-index', String(spec.gressIndex)],
    ['port-policy-protocol', spec.protocol ?? 'None'],
  ]);
  const portGroup = adminNetworkPolicyPortGroupName(spec.name, baseline, controller);
  return buildAcl(
    ids,
    `${baseline ? 'BANP' : 'ANP'}:${spec.name}:${spec.direction}:${spec.gressIndex}`,
    spec.priority,
    portGroupMatch(portGroup, spec.peerMatch, spec.direction),
    spec.action,
    pipelineOf(spec.direction),
    baseline ? BANP_ACL_TIER : ANP_ACL_TIER,
  );
}

export function namespacePortGroupName(namespace: string, controller = DEFAULT_NETWORK_CONTROLLER): string {
  return hashForOvn(`${controller}:Namespace:${namespace}`);
}

/** The namespace's multicast allow ACLs (createMulticastAllowPolicy). */
export function multicastNamespaceAcl(spec: {
  namespace: string;
  direction: Direction;
  addressSet?: string;
  controller?: string;
}): OvnkAcl {
  const controller = spec.controller ?? DEFAULT_NETWORK_CONTROLLER;
  const ids = dbObjectIds(controller, 'MulticastNS', [
    ['k8s.ovn.org/name', spec.namespace],
    ['direction', spec.direction],
  ]);
  const portGroup = namespacePortGroupName(spec.namespace, controller);
  const rule = spec.direction === 'Egress' ? 'ip4.mcast' : `(igmp || (ip4.src == $${spec.addressSet ?? 'a0'} && ip4.mcast))`;
  return buildAcl(ids, '', MCAST_ALLOW_PRIORITY, portGroupMatch(portGroup, rule, spec.direction), 'allow', pipelineOf(spec.direction));
}

/** The cluster-wide multicast ACLs: DefaultDeny (drop) or AllowInterNode (allow). */
export function multicastClusterAcl(spec: { type: 'DefaultDeny' | 'AllowInterNode'; direction: Direction; controller?: string }): OvnkAcl {
  const controller = spec.controller ?? DEFAULT_NETWORK_CONTROLLER;
  const ids = dbObjectIds(controller, 'MulticastCluster', [
    ['type', spec.type],
    ['direction', spec.direction],
  ]);
  const portGroup = hashForOvn(`${controller}:Cluster:clusterPortGroup`);
  return spec.type === 'DefaultDeny'
    ? buildAcl(
        ids,
        '',
        MCAST_DENY_PRIORITY,
        portGroupMatch(portGroup, '(ip4.mcast || mldv1 || mldv2 || (ip6.dst[120..127] == 0xff && ip6.dst[116] == 1))', spec.direction),
        'drop',
        pipelineOf(spec.direction),
      )
    : buildAcl(ids, '', MCAST_ALLOW_PRIORITY, portGroupMatch(portGroup, 'ip4.mcast', spec.direction), 'allow', pipelineOf(spec.direction));
}

/** An EgressFirewall rule: priority 10000 - rule index, a to-lport ACL on the namespace's port group. */
export function egressFirewallAcl(spec: {
  namespace: string;
  ruleIndex: number;
  destination: string;
  action: 'allow' | 'drop';
  controller?: string;
}): OvnkAcl {
  const controller = spec.controller ?? DEFAULT_NETWORK_CONTROLLER;
  const ids = dbObjectIds(controller, 'EgressFirewall', [
    ['k8s.ovn.org/name', spec.namespace],
    ['rule-index', String(spec.ruleIndex)],
  ]);
  const addressSet = hashForOvn(`${controller}:Namespace:${spec.namespace}:v4`);
  return buildAcl(
    ids,
    `EF:${spec.namespace}:${spec.ruleIndex}`,
    EGRESS_FIREWALL_START_PRIORITY - spec.ruleIndex,
    `(ip4.dst == ${spec.destination}) && ip4.src == $${addressSet} && ip4.dst != 10.128.0.0/14`,
    spec.action,
    'to-lport',
  );
}

/** A UDN isolation ACL on the default network's switch (udn_isolation.go): DenySecondary, AllowHostARPSecondary, ... */
export function udnIsolationAcl(spec: { name: string; direction: Direction; controller?: string }): OvnkAcl {
  const controller = spec.controller ?? DEFAULT_NETWORK_CONTROLLER;
  const ids = dbObjectIds(controller, 'UDNIsolation', [
    ['k8s.ovn.org/name', spec.name],
    ['direction', spec.direction],
  ]);
  const portGroup = hashForOvn(`${controller}:UDNIsolation:SecondaryPods`);
  const deny = spec.name === 'DenySecondary';
  return buildAcl(
    ids,
    '',
    deny ? DEFAULT_DENY_PRIORITY : DEFAULT_ALLOW_PRIORITY,
    portGroupMatch(portGroup, deny ? '' : '(ip4.src==10.244.0.2)', spec.direction),
    deny ? 'drop' : 'allow-related',
    spec.direction === 'Ingress' ? 'to-lport' : 'from-lport',
  );
}

export function sampleMetadataOf(acl: OvnkAcl): number {
  return aclSampleMetadata({ primaryId: acl.externalIds['k8s.ovn.org/id'] ?? '', match: acl.match, action: acl.action });
}

function ovsdbMap(record: Readonly<Record<string, string>>): unknown {
  return ['map', Object.entries(record)];
}

/** A row reference: a uuid-name from the same transaction, or { uuid } of an existing row. */
export type RowRef = string | { readonly uuid: string };

function ref(row: RowRef): unknown {
  return typeof row === 'string' ? ['named-uuid', row] : ['uuid', row.uuid];
}

function namedSet(rows: readonly RowRef[]): unknown {
  return ['set', rows.map(ref)];
}

/**
 * One northbound transaction. ACL and Sample rows are not root rows, so they must be created
 * together with the Port_Group or Logical_Switch that references them.
 */
export class NorthboundTransaction {
  readonly operations: OvsdbOperation[] = [];
  private nextName = 0;
  private readonly samplesByMetadata = new Map<number, string>();

  private name(prefix: string): string {
    this.nextName++;
    return `${prefix}${this.nextName}`;
  }

  /** The three Sampling_App rows; ovn-kubernetes uses OVNK_SAMPLING_APP_IDS. */
  samplingApps(ids: Readonly<Record<'drop' | 'acl-new' | 'acl-est', number>> = OVNK_SAMPLING_APP_IDS): this {
    for (const [type, id] of Object.entries(ids)) {
      this.operations.push({ op: 'insert', table: 'Sampling_App', row: { type, id } });
    }
    return this;
  }

  /** A Sample_Collector as observability.Manager creates it; returns its named uuid. */
  collector(spec: { id?: number; setId?: number; probability?: number; features?: string } = {}): string {
    const uuidName = this.name('collector');
    this.operations.push({
      op: 'insert',
      table: 'Sample_Collector',
      'uuid-name': uuidName,
      row: {
        id: spec.id ?? 1,
        set_id: spec.setId ?? 42,
        probability: spec.probability ?? 65535,
        external_ids: ovsdbMap({
          'sample-features': spec.features ?? 'AdminNetworkPolicy,EgressFirewall,Multicast,NetworkPolicy,UDNIsolation',
        }),
      },
    });
    return uuidName;
  }

  /**
   * Inserts the ACL; with `collector`, also its Sample (one per metadata value, as the NB index on
   * Sample.metadata demands) referenced from both sample_new and sample_est. Returns the named uuid.
   */
  acl(acl: OvnkAcl, sampling?: { collector: RowRef }): string {
    const uuidName = this.name('acl');
    const row: Record<string, unknown> = {
      direction: acl.direction,
      priority: acl.priority,
      match: acl.match,
      action: acl.action,
      tier: acl.tier,
      meter: 'acl-logging',
      log: false,
      options: ovsdbMap(acl.options),
      external_ids: ovsdbMap(acl.externalIds),
    };
    if (acl.name !== undefined) {
      row.name = acl.name;
    }
    if (acl.label !== undefined) {
      row.label = acl.label;
    }
    if (sampling !== undefined) {
      const sample = ['named-uuid', this.sampleFor(acl, sampling.collector)];
      row.sample_new = sample;
      row.sample_est = sample;
    }
    this.operations.push({ op: 'insert', table: 'ACL', 'uuid-name': uuidName, row });
    return uuidName;
  }

  /**
   * Rewrites an existing ACL's rule as ovn-kubernetes's CreateOrUpdate does: the new match/action
   * hash to a new Sample, and the old Sample, no longer referenced, is garbage-collected.
   */
  updateAclRule(aclUuid: string, acl: OvnkAcl, sampling: { collector: RowRef }): this {
    const sample = ['named-uuid', this.sampleFor(acl, sampling.collector)];
    this.operations.push({
      op: 'update',
      table: 'ACL',
      where: [['_uuid', '==', ['uuid', aclUuid]]],
      row: { match: acl.match, action: acl.action, priority: acl.priority, sample_new: sample, sample_est: sample },
    });
    return this;
  }

  /** The uuid the server gave the row inserted under `uuidName`, from this transaction's results. */
  uuidOf(results: readonly unknown[], uuidName: string): string {
    const index = this.operations.findIndex((operation) => operation['uuid-name'] === uuidName);
    const result = results[index] as { uuid?: [string, string] } | undefined;
    if (result?.uuid === undefined) {
      throw new Error(`No insert result for ${uuidName}`);
    }
    return result.uuid[1];
  }

  private sampleFor(acl: OvnkAcl, collector: RowRef): string {
    const metadata = sampleMetadataOf(acl);
    const existing = this.samplesByMetadata.get(metadata);
    if (existing !== undefined) {
      return existing;
    }
    const uuidName = this.name('sample');
    this.operations.push({ op: 'insert', table: 'Sample', 'uuid-name': uuidName, row: { metadata, collectors: namedSet([collector]) } });
    this.samplesByMetadata.set(metadata, uuidName);
    return uuidName;
  }

  /** A Port_Group named and labelled like ovn-kubernetes's (name = HashForOVN(k8s.ovn.org/id)). */
  portGroup(spec: { name: string; externalIds: Readonly<Record<string, string>>; acls: readonly RowRef[] }): string {
    const uuidName = this.name('pg');
    this.operations.push({
      op: 'insert',
      table: 'Port_Group',
      'uuid-name': uuidName,
      row: { name: spec.name, acls: namedSet(spec.acls), external_ids: ovsdbMap(spec.externalIds) },
    });
    return uuidName;
  }

  /**
   * A logical switch; `network`/`topology`/`role` give it the external_ids of a user-defined
   * network's switch (GenerateExternalIDsForSwitchOrRouter); default-network switches have none.
   */
  logicalSwitch(spec: { name: string; network?: string; topology?: string; role?: string; acls?: readonly RowRef[] }): string {
    const uuidName = this.name('ls');
    const externalIds: Record<string, string> = {};
    if (spec.network !== undefined) {
      externalIds['k8s.ovn.org/network'] = spec.network;
      externalIds['k8s.ovn.org/role'] = spec.role ?? 'primary';
      externalIds['k8s.ovn.org/topology'] = spec.topology ?? 'layer3';
    }
    this.operations.push({
      op: 'insert',
      table: 'Logical_Switch',
      'uuid-name': uuidName,
      row: { name: spec.name, acls: namedSet(spec.acls ?? []), external_ids: ovsdbMap(externalIds) },
    });
    return uuidName;
  }
}

/** ovn-kubernetes's per-policy port group external_ids (PortGroupNetworkPolicy ids). */
export function networkPolicyPortGroupIds(
  namespace: string,
  policy: string,
  controller = DEFAULT_NETWORK_CONTROLLER,
): Record<string, string> {
  return dbObjectIds(controller, 'NetworkPolicy', [['k8s.ovn.org/name', `${namespace}:${policy}`]]);
}

/** The UDN switch naming ovn-kubernetes uses: network name with '-' and '/' made '.', then '_', then the node. */
export function udnSwitchName(network: string, node: string, topology: 'layer3' | 'layer2' = 'layer3'): string {
  const prefix = `${network.replaceAll('-', '.').replaceAll('/', '.')}_`;
  return topology === 'layer2' ? `${prefix}ovn_layer2_switch` : `${prefix}${node}`;
}

/** Southbound rows as ovn-northd writes them. */
export function datapathBindingOp(spec: { tunnelKey: number; logicalSwitchUuid: string; name: string; uuidName?: string }): OvsdbOperation {
  return {
    op: 'insert',
    table: 'Datapath_Binding',
    ...(spec.uuidName === undefined ? {} : { 'uuid-name': spec.uuidName }),
    row: { tunnel_key: spec.tunnelKey, external_ids: ovsdbMap({ 'logical-switch': spec.logicalSwitchUuid, name: spec.name }) },
  };
}

export function logicalFlowOp(spec: {
  datapath: unknown;
  pipeline: 'ingress' | 'egress';
  tableId: number;
  priority: number;
  match: string;
  actions: string;
  stageName: string;
  source: string;
  stageHintUuid?: string;
}): OvsdbOperation {
  const externalIds: Record<string, string> = { 'stage-name': spec.stageName, source: spec.source };
  if (spec.stageHintUuid !== undefined) {
    externalIds['stage-hint'] = spec.stageHintUuid.slice(0, 8);
  }
  return {
    op: 'insert',
    table: 'Logical_Flow',
    row: {
      logical_datapath: spec.datapath,
      pipeline: spec.pipeline,
      table_id: spec.tableId,
      priority: spec.priority,
      match: spec.match,
      actions: spec.actions,
      external_ids: ovsdbMap(externalIds),
    },
  };
}
