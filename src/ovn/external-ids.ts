/** external_ids keys ovn-kubernetes writes (go-controller/pkg/libovsdb/ops, pkg/types). */
export const OwnerTypeKey = 'k8s.ovn.org/owner-type';
export const OwnerControllerKey = 'k8s.ovn.org/owner-controller';
export const ObjectNameKey = 'k8s.ovn.org/name';
export const PrimaryIdKey = 'k8s.ovn.org/id';
export const PolicyDirectionKey = 'direction';
export const NetworkKey = 'k8s.ovn.org/network';
export const TopologyKey = 'k8s.ovn.org/topology';
export const NetworkRoleKey = 'k8s.ovn.org/role';

/** The network of switches without a network key: ovn-kubernetes only labels user-defined ones. */
export const DEFAULT_NETWORK = 'default';

/** A cached map column; string-keyed in every table this module reads. */
export type ExternalIds = ReadonlyMap<string | number | boolean, string | number | boolean>;

export function externalId(ids: ExternalIds | undefined, key: string): string | undefined {
  const value = ids?.get(key);
  return value === undefined ? undefined : String(value);
}
