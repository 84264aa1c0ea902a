import { mapColumn, numberColumn, stringColumn } from '../ovn/row-values';
import type { Row } from '../ovsdb/row';
import { ownerFromExternalIds, type OwnerProcess } from './collector-owner';
import type { LocalOvs } from './local-ovs';

/** The Flow_Sample_Collector_Set id OVN-Kubernetes' Sample_Collector uses (DefaultObservabilityCollectorSetID). */
export const OVN_KUBERNETES_COLLECTOR_SET_ID = 42;
/** The psample group ovn-psample gives a collector set it creates, unless told otherwise. */
export const DEFAULT_LOCAL_GROUP = 42;
export const DEFAULT_BRIDGE = 'br-int';

/** external_ids that mark a row as ovn-psample's: `owner` is the key ovnkube-observ also uses. */
export const OWNER_KEY = 'owner';
export const OWNER = 'ovn-psample';

export interface CollectorSetInfo {
  readonly uuid: string;
  readonly id: number;
  /** The bridge's name (its uuid when the bridge row is unknown). */
  readonly bridge: string;
  readonly bridgeUuid: string;
  /** The psample group its samples carry; absent for IPFIX-only sets. */
  readonly localGroupId?: number;
  readonly ipfix: boolean;
  /** external_ids:owner as ovnkube-observ, netobserv and ovn-psample write it. */
  readonly owner?: string;
  readonly externalIds: Readonly<Record<string, string>>;
  /** Made by ovn-psample. */
  readonly ours: boolean;
  /** For sets a `watch` made: the process that removes it at exit (or whose death lets the next one take it over). */
  readonly ownerProcess?: OwnerProcess;
}

export function collectorSetInfo(ovs: LocalOvs, row: Row): CollectorSetInfo {
  const externalIds: Record<string, string> = {};
  for (const [key, value] of mapColumn(row, 'external_ids')) externalIds[String(key)] = String(value);
  const bridgeUuid = stringColumn(row, 'bridge') ?? '';
  const bridge = ovs.cache.table('Bridge').get(bridgeUuid);
  const localGroupId = numberColumn(row, 'local_group_id');
  const owner = externalIds[OWNER_KEY];
  const ownerProcess = ownerFromExternalIds(externalIds);
  return {
    uuid: row._uuid,
    id: numberColumn(row, 'id') ?? 0,
    bridge: (bridge === undefined ? undefined : stringColumn(bridge, 'name')) ?? bridgeUuid,
    bridgeUuid,
    ...(localGroupId === undefined ? {} : { localGroupId }),
    ipfix: stringColumn(row, 'ipfix') !== undefined,
    ...(owner === undefined ? {} : { owner }),
    externalIds,
    ours: owner === OWNER,
    ...(ownerProcess === undefined ? {} : { ownerProcess }),
  };
}

/** Every collector set, by bridge name then id. */
export function collectorSets(ovs: LocalOvs): CollectorSetInfo[] {
  return [...ovs.cache.table('Flow_Sample_Collector_Set').values()]
    .map((row) => collectorSetInfo(ovs, row))
    .sort((a, b) => a.bridge.localeCompare(b.bridge) || a.id - b.id);
}

/** The set with `id` on the bridge with uuid `bridgeUuid` ((id, bridge) is the table's index). */
export function findCollectorSet(ovs: LocalOvs, bridgeUuid: string, id: number): CollectorSetInfo | undefined {
  const row = ovs.cache
    .table('Flow_Sample_Collector_Set')
    .lookup('id', id)
    .find((candidate) => stringColumn(candidate, 'bridge') === bridgeUuid);
  return row === undefined ? undefined : collectorSetInfo(ovs, row);
}

/** "owned by ovnk-debug", "not marked with an owner": how a message names who made a set. */
export function ownerText(set: CollectorSetInfo): string {
  if (set.ours) {
    return set.ownerProcess === undefined ? 'made by ovn-psample collector add' : `made by ovn-psample watch (pid ${set.ownerProcess.pid})`;
  }
  return set.owner === undefined ? 'not marked with an owner (external_ids:owner)' : `owned by ${set.owner}`;
}
