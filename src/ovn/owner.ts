import { externalId, ObjectNameKey, OwnerControllerKey, OwnerTypeKey, PolicyDirectionKey, PrimaryIdKey, type ExternalIds } from './external-ids';

/** ACL owner types ovn-kubernetes samples (go-controller/pkg/libovsdb/ops/db_object_types.go). */
export const OwnerType = {
  NetworkPolicy: 'NetworkPolicy',
  AdminNetworkPolicy: 'AdminNetworkPolicy',
  BaselineAdminNetworkPolicy: 'BaselineAdminNetworkPolicy',
  NetpolNamespace: 'NetpolNamespace',
  NetpolNode: 'NetpolNode',
  MulticastNamespace: 'MulticastNS',
  MulticastCluster: 'MulticastCluster',
  EgressFirewall: 'EgressFirewall',
  UDNIsolation: 'UDNIsolation',
} as const;

/** The Kubernetes object behind an ACL, read from the ACL's external_ids. */
export interface PolicyOwner {
  /** external_ids["k8s.ovn.org/owner-type"]. */
  readonly type: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly direction?: string;
  /** external_ids["k8s.ovn.org/owner-controller"]: "default-network-controller" or "<network>-network-controller". */
  readonly controller?: string;
  /** external_ids["k8s.ovn.org/id"]. */
  readonly id?: string;
}

/** How ovnkube-observ words an ACL action ("Allowed", "Dropped", ...). */
export function actionVerb(action: string): string {
  switch (action) {
    case 'allow':
    case 'allow-related':
    case 'allow-stateless':
      return 'Allowed';
    case 'drop':
      return 'Dropped';
    case 'pass':
      return 'Delegated to network policy';
    default:
      return `Action ${action}`;
  }
}

/** The owner described by an ovn-kubernetes ACL's external_ids, or undefined for other ACLs. */
export function policyOwner(externalIds: ExternalIds): PolicyOwner | undefined {
  const type = externalId(externalIds, OwnerTypeKey);
  if (type === undefined) {
    return undefined;
  }
  const objectName = externalId(externalIds, ObjectNameKey);
  const direction = externalId(externalIds, PolicyDirectionKey);
  const common = {
    type,
    controller: externalId(externalIds, OwnerControllerKey),
    id: externalId(externalIds, PrimaryIdKey),
  };
  switch (type) {
    case OwnerType.NetworkPolicy: {
      const separator = objectName?.indexOf(':') ?? -1;
      return objectName !== undefined && separator >= 0
        ? { ...common, namespace: objectName.slice(0, separator), name: objectName.slice(separator + 1), direction }
        : { ...common, name: objectName, direction };
    }
    case OwnerType.AdminNetworkPolicy:
    case OwnerType.BaselineAdminNetworkPolicy:
      return { ...common, name: objectName, direction };
    case OwnerType.MulticastNamespace:
    case OwnerType.NetpolNamespace:
      return { ...common, namespace: objectName, direction };
    case OwnerType.MulticastCluster:
      return { ...common, direction };
    case OwnerType.EgressFirewall:
      // Egress firewall ACLs carry no direction key: they only ever filter egress.
      return { ...common, namespace: objectName, direction: 'Egress' };
    case OwnerType.UDNIsolation:
      return { ...common, name: objectName, direction };
    case OwnerType.NetpolNode:
      // The node's allow-from-management-port ACL only ever filters ingress.
      return { ...common, name: objectName, direction: 'Ingress' };
    default:
      return { ...common, name: objectName, direction };
  }
}

/** The part of ovnkube-observ's message after "<verb> by ", or undefined for owner types it does not know. */
function ownerPhrase(owner: PolicyOwner): string | undefined {
  const direction = owner.direction ?? '';
  switch (owner.type) {
    case OwnerType.AdminNetworkPolicy:
      return `admin network policy ${owner.name ?? ''}, direction ${direction}`;
    case OwnerType.BaselineAdminNetworkPolicy:
      return `baseline admin network policy ${owner.name ?? ''}, direction ${direction}`;
    case OwnerType.MulticastNamespace:
      return `multicast in namespace ${owner.namespace ?? ''}, direction ${direction}`;
    case OwnerType.MulticastCluster:
      return `cluster multicast policy, direction ${direction}`;
    case OwnerType.NetpolNode:
      return `default allow from local node policy, direction ${direction}`;
    case OwnerType.NetworkPolicy:
      return owner.namespace !== undefined
        ? `network policy ${owner.name ?? ''} in namespace ${owner.namespace}, direction ${direction}`
        : `network policy ${owner.name ?? ''}, direction ${direction}`;
    case OwnerType.NetpolNamespace:
      return `network policies isolation in namespace ${owner.namespace ?? ''}, direction ${direction}`;
    case OwnerType.EgressFirewall:
      return `egress firewall in namespace ${owner.namespace ?? ''}`;
    case OwnerType.UDNIsolation:
      return `UDN isolation of type ${owner.name ?? ''}`;
    default:
      return undefined;
  }
}

/** The ACL as the message names it when no Kubernetes owner explains it. */
export interface AclReference {
  readonly uuid: string;
  readonly name?: string;
}

/**
 * ovnkube-observ's sentence for an ACL hit, e.g. "Allowed by network policy web in namespace
 * shop, direction Ingress". ACLs it cannot attribute to Kubernetes are named as OVN ACLs.
 */
export function aclMessage(action: string, owner: PolicyOwner | undefined, acl: AclReference): string {
  const phrase = owner === undefined ? undefined : ownerPhrase(owner);
  if (phrase !== undefined) {
    return `${actionVerb(action)} by ${phrase}`;
  }
  const what = acl.name !== undefined && acl.name !== '' ? `OVN ACL "${acl.name}"` : `OVN ACL ${acl.uuid}`;
  const ownedBy = owner === undefined ? '' : ` (owner type ${owner.type})`;
  return `${actionVerb(action)} by ${what}${ownedBy}`;
}
