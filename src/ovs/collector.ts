import { OvsdbTransactionError } from '../errors';
import {
  findCollectorSet,
  ownerText,
  OWNER,
  OWNER_KEY,
  DEFAULT_BRIDGE,
  DEFAULT_LOCAL_GROUP,
  OVN_KUBERNETES_COLLECTOR_SET_ID,
  type CollectorSetInfo,
} from './collector-set';
import { holdBeacon, isOwnerKey, judgeOwner, ownerExternalIds, sameOwner, thisProcess, type OwnerVerdict } from './collector-owner';
import { OvsBridgeNotFoundError, OvsCollectorConflictError, OvsPsampleUnsupportedError } from './errors';
import type { LocalOvs } from './local-ovs';
import { psampleSupport, type PsampleSupport } from './psample-support';

export interface CollectorOptions {
  /** Default br-int. */
  readonly bridge?: string;
  /** Flow_Sample_Collector_Set id; default 42, the one OVN-Kubernetes' Sample_Collector names. */
  readonly id?: number;
}

export interface AddCollectorOptions extends CollectorOptions {
  /** psample group of a set this call creates; default 42. An existing set keeps its own. */
  readonly group?: number;
  /**
   * Marks a set this call makes with this process (pid, pid and network namespace, boot id, start
   * time), to be removed by it (watch --add-ovs-collector); should the process die first, the next
   * call that marks takes the set over. A set marked by a process that has died is taken over.
   */
  readonly markOwner?: boolean;
}

export interface CollectorClaim {
  /** The psample group to listen on. */
  readonly group: number;
  readonly set: CollectorSetInfo;
  /** This process made the set (or took over one a dead ovn-psample watch left): it removes it with releaseCollector(). */
  readonly owned: boolean;
  /** For a set a watch marked: whether its owner was found alive, and why (a set taken over: why it was judged dead). */
  readonly previousOwner?: OwnerVerdict;
  /** An existing set's group, when it differs from the group asked for. */
  readonly groupDiffers: boolean;
  readonly support: PsampleSupport;
}

/** How long a set another writer just committed may take to reach the mirror. */
const MIRROR_CATCH_UP_MS = 5000;

function bridgeUuidOf(ovs: LocalOvs, bridge: string): string {
  const row = ovs.bridge(bridge);
  if (row === undefined) {
    throw new OvsBridgeNotFoundError(
      `The OVS database has no bridge ${bridge}: ovn-controller creates br-int, so start it first, or name the integration bridge with --bridge.`,
    );
  }
  return row._uuid;
}

async function caughtUp<T>(read: () => T | undefined): Promise<T | undefined> {
  const deadline = Date.now() + MIRROR_CATCH_UP_MS;
  for (;;) {
    const value = read();
    if (value !== undefined || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function reuse(
  ovs: LocalOvs,
  existing: CollectorSetInfo,
  options: AddCollectorOptions,
  support: PsampleSupport,
): Promise<CollectorClaim> {
  if (existing.localGroupId === undefined) {
    throw new OvsCollectorConflictError(
      `Flow_Sample_Collector_Set ${existing.id} on ${existing.bridge} exists without local_group_id (${ownerText(existing)}${existing.ipfix ? ', it exports IPFIX' : ''}), so it emits no psample samples, and ovn-psample never changes a set it did not make. Ask its owner to give it one (ovs-vsctl set Flow_Sample_Collector_Set ${existing.uuid} local_group_id=N), or use another --id and point OVN's Sample_Collector set_id at it.`,
    );
  }
  const claim = {
    group: existing.localGroupId,
    set: existing,
    owned: false,
    groupDiffers: options.group !== undefined && options.group !== existing.localGroupId,
    support,
  };
  const recorded = existing.ours ? existing.ownerProcess : undefined;
  if (options.markOwner !== true || recorded === undefined) return claim;
  const self = thisProcess();
  if (sameOwner(recorded, self)) return { ...claim, owned: true };
  const previousOwner = await judgeOwner(recorded, self);
  if (previousOwner.alive) return { ...claim, previousOwner };
  await holdBeacon(self);
  // Stamped only while the dead owner's mark is still there: of two processes taking it over at once, one wins.
  const [result] = await ovs.transact([
    {
      op: 'update',
      table: 'Flow_Sample_Collector_Set',
      where: [
        ['_uuid', '==', ['uuid', existing.uuid]],
        ['external_ids', 'includes', ['map', [[OWNER_KEY, OWNER], ...ownerExternalIds(recorded)]]],
      ],
      row: {
        external_ids: ['map', [...Object.entries(existing.externalIds).filter(([key]) => !isOwnerKey(key)), ...ownerExternalIds(self)]],
      },
    },
  ]);
  const owned = (result as { count?: number }).count === 1;
  return { ...claim, owned, previousOwner, set: owned ? { ...existing, ownerProcess: self } : existing };
}

/**
 * Makes sure samples of collector set `id` on `bridge` reach a psample group, and says which.
 * A set that already has a local_group_id (made by ovn-kubernetes tooling, ovnkube-observ,
 * netobserv or an earlier ovn-psample) is reused as it is; a set without one is refused, never
 * changed. Otherwise a set marked external_ids:owner=ovn-psample is created. Refuses when the
 * datapath is known to lack the psample action.
 */
export async function addCollector(ovs: LocalOvs, options: AddCollectorOptions = {}): Promise<CollectorClaim> {
  const bridge = options.bridge ?? DEFAULT_BRIDGE;
  const id = options.id ?? OVN_KUBERNETES_COLLECTOR_SET_ID;
  const bridgeUuid = bridgeUuidOf(ovs, bridge);
  const support = psampleSupport(ovs, bridge);
  if (support.supported === false) {
    throw new OvsPsampleUnsupportedError(support.reason);
  }
  const existing = findCollectorSet(ovs, bridgeUuid, id);
  if (existing !== undefined) {
    return reuse(ovs, existing, options, support);
  }
  const group = options.group ?? DEFAULT_LOCAL_GROUP;
  const externalIds: [string, string][] = [[OWNER_KEY, OWNER]];
  if (options.markOwner === true) {
    const self = thisProcess();
    await holdBeacon(self);
    externalIds.push(...ownerExternalIds(self));
  }
  const where = [
    ['id', '==', id],
    ['bridge', '==', ['uuid', bridgeUuid]],
  ];
  try {
    await ovs.transact([
      // Another writer may have made the set since the mirror last heard: then nothing is inserted.
      { op: 'wait', table: 'Flow_Sample_Collector_Set', where, columns: ['id'], until: '==', rows: [], timeout: 0 },
      {
        op: 'insert',
        table: 'Flow_Sample_Collector_Set',
        row: { id, bridge: ['uuid', bridgeUuid], local_group_id: group, external_ids: ['map', externalIds] },
      },
    ]);
  } catch (error) {
    if (!(error instanceof OvsdbTransactionError)) throw error;
    const raced = await caughtUp(() => findCollectorSet(ovs, bridgeUuid, id));
    if (raced === undefined) throw error;
    return reuse(ovs, raced, options, support);
  }
  const created = await caughtUp(() => findCollectorSet(ovs, bridgeUuid, id));
  if (created === undefined) {
    throw new OvsCollectorConflictError(
      `Flow_Sample_Collector_Set ${id} on ${bridge} was created but deleted again at once by another writer: check who manages collector sets on this node.`,
    );
  }
  return { group, set: created, owned: true, groupDiffers: false, support };
}

/** The delete of one set by uuid, and only while it still carries ovn-psample's mark. */
function deleteOurs(set: CollectorSetInfo): unknown {
  return {
    op: 'delete',
    table: 'Flow_Sample_Collector_Set',
    where: [
      ['_uuid', '==', ['uuid', set.uuid]],
      ['external_ids', 'includes', ['map', [[OWNER_KEY, OWNER]]]],
    ],
  };
}

/** Removes the set a claim owns; false when it was gone already (or someone re-marked it). */
export async function releaseCollector(ovs: LocalOvs, claim: CollectorClaim): Promise<boolean> {
  if (!claim.owned) return false;
  const [result] = await ovs.transact([deleteOurs(claim.set)]);
  return (result as { count?: number }).count === 1;
}

export interface RemovedCollector {
  /** The set that was removed, or undefined when there was none. */
  readonly removed: CollectorSetInfo | undefined;
}

/** Removes collector set `id` on `bridge` if ovn-psample made it; refuses anyone else's. */
export async function removeCollector(ovs: LocalOvs, options: CollectorOptions = {}): Promise<RemovedCollector> {
  const bridge = options.bridge ?? DEFAULT_BRIDGE;
  const id = options.id ?? OVN_KUBERNETES_COLLECTOR_SET_ID;
  const existing = findCollectorSet(ovs, bridgeUuidOf(ovs, bridge), id);
  if (existing === undefined) return { removed: undefined };
  if (!existing.ours) {
    throw new OvsCollectorConflictError(
      `Flow_Sample_Collector_Set ${id} on ${bridge} is ${ownerText(existing)}: ovn-psample removes only sets it made. Its owner removes it (ovs-vsctl destroy Flow_Sample_Collector_Set ${existing.uuid}).`,
    );
  }
  const [result] = await ovs.transact([deleteOurs(existing)]);
  return { removed: (result as { count?: number }).count === 1 ? existing : undefined };
}
