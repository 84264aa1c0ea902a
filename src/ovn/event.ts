import type { PolicyOwner } from './owner';

/** Which OVN sampling application produced the sample; 'acl-label' is an ACL with a label (app bits 0). */
export type OvnSampleApp = 'acl-new' | 'acl-est' | 'drop' | 'acl-label';

/**
 * - decoded: the cookie names objects that exist now.
 * - stale: the cookie's shape is OVN's but what it names is gone (conntrack keeps point ids of
 *   established connections after their ACL changed), or not there yet.
 * - unknown: the cookie cannot be OVN's, or this decoder lacks what it needs to read it.
 */
export type OvnSampleStatus = 'decoded' | 'stale' | 'unknown';

export type OvnStaleReason = 'sample-not-found' | 'acl-not-found' | 'flow-not-found';

export type OvnUnknownReason =
  /** The psample message has no 8-byte user cookie (not OVS, or not a sample). */
  | 'not-ovn-cookie'
  /** The app id is in no Sampling_App row (and is not 0, the label app). */
  | 'unknown-app'
  /** A drop sample, but the decoder has no southbound database to find the logical flow in. */
  | 'no-southbound'
  /** decode() was called before start() finished the initial sync. */
  | 'not-synced';

export interface OvnAclInfo {
  readonly uuid: string;
  readonly name?: string;
  readonly priority: number;
  readonly direction: string;
  readonly match: string;
  readonly action: string;
  readonly tier: number;
  readonly label: number;
}

export interface OvnDatapathInfo {
  /** The datapath tunnel key: the low 24 bits of obs_domain_id. */
  readonly key: number;
  /** Logical_Switch name, when the key resolves (needs the southbound database). */
  readonly switch?: string;
  /** Logical_Router name, when the datapath is a router. */
  readonly router?: string;
  /** The switch's network: k8s.ovn.org/network, or "default" for switches without one. */
  readonly network?: string;
  /** k8s.ovn.org/topology of a user-defined network's switch (layer3, layer2, localnet). */
  readonly topology?: string;
  /** k8s.ovn.org/role of a user-defined network's switch (primary, secondary). */
  readonly role?: string;
}

/** The northbound row a logical flow's stage-hint names. */
export interface OvnStageHint {
  /** The 8 hex digits northd stores: the first 32 bits of the northbound row's UUID. */
  readonly hint: string;
  readonly table?: string;
  readonly uuid?: string;
  readonly name?: string;
}

export interface OvnLogicalFlowInfo {
  readonly uuid: string;
  readonly stage?: string;
  readonly source?: string;
  readonly pipeline: string;
  readonly table: number;
  readonly priority: number;
  /**
   * The flow's match and actions, read from the southbound database the first time a sample
   * names the flow: absent from the events decoded before that read completed (decodeWithDetails() waits for it).
   */
  readonly match?: string;
  readonly actions?: string;
  readonly hint?: OvnStageHint;
  /** ovn-northd's description of the flow (Logical_Flow flow_desc), which it gives some drop flows: "No L2 destination". */
  readonly description?: string;
}

/**
 * The OpenFlow table of ovn-controller's own drop (datapath key 0 in the sample: put_drop() in
 * OVN's controller/physical.c), where no logical flow is involved.
 */
export interface OvnOpenFlowTableInfo {
  /** The table number: the sample's obs_point_id. */
  readonly table: number;
  /** The OVN release whose table layout names it, from options:northd_internal_version. */
  readonly release?: string;
  /** OVN's name for the table ("OFTABLE_CHECK_LOOPBACK"), when the release's tables are known. */
  readonly name?: string;
  /** Why ovn-controller drops there. */
  readonly description?: string;
}

/** What a sample meant when it was last decodable; kept for stale samples. */
export interface OvnAclVerdict {
  readonly message: string;
  readonly action: string;
  readonly owner?: PolicyOwner;
  readonly acl: OvnAclInfo;
}

export interface OvnSampleEvent {
  readonly status: OvnSampleStatus;
  readonly reason?: OvnStaleReason | OvnUnknownReason;
  readonly obsDomainId: number;
  readonly obsPointId: number;
  readonly appId: number;
  readonly app?: OvnSampleApp;
  /** ovnkube-observ's sentence for decoded ACL samples, an explanation otherwise. */
  readonly message: string;
  readonly action?: string;
  readonly owner?: PolicyOwner;
  readonly acl?: OvnAclInfo;
  /** Further ACLs sharing the sample (ovn-kubernetes gives identical ACLs one Sample). */
  readonly otherAcls?: readonly string[];
  readonly flow?: OvnLogicalFlowInfo;
  /** For ovn-controller's own drops: the OpenFlow table. */
  readonly openflowTable?: OvnOpenFlowTableInfo;
  readonly datapath: OvnDatapathInfo;
  /** For stale ACL samples: what the point id meant before its ACL changed, when seen. */
  readonly previous?: OvnAclVerdict;
}
