import {
  externalId,
  ObjectNameKey,
  OwnerControllerKey,
  OwnerTypeKey,
  PolicyDirectionKey,
  PrimaryIdKey,
  type ExternalIds,
} from './external-ids';

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

/**
 * The owner described by an ovn-kubernetes ACL's external_ids, or undefined for other ACLs, read
 * per owner type as ovnkube-observ's newACLEvent() reads it. Empty values count as absent.
 */
export function policyOwner(externalIds: ExternalIds): PolicyOwner | undefined {
  const type = nonEmpty(externalId(externalIds, OwnerTypeKey));
  if (type === undefined) {
    return undefined;
  }
  const objectName = nonEmpty(externalId(externalIds, ObjectNameKey));
  const direction = nonEmpty(externalId(externalIds, PolicyDirectionKey));
  const common = {
    type,
    controller: nonEmpty(externalId(externalIds, OwnerControllerKey)),
    id: nonEmpty(externalId(externalIds, PrimaryIdKey)),
  };
  switch (type) {
    case OwnerType.NetworkPolicy: {
      // "namespace:name", split at the first colon. ovnkube-observ refuses a name without one
      // ("expected format namespace:name"); it is kept here as a name without a namespace.
      const separator = objectName?.indexOf(':') ?? -1;
      return objectName !== undefined && separator >= 0
        ? { ...common, namespace: nonEmpty(objectName.slice(0, separator)), name: nonEmpty(objectName.slice(separator + 1)), direction }
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

function nonEmpty(value: string | undefined): string | undefined {
  return value === '' ? undefined : value;
}

/**
 * How an ACL hit is worded: 'sentence' is ovnkube-observ's message; 'step' is one step of a
 * packet's verdict chain, where the order of the steps tells the direction and "Delegated by"
 * reads better before the next step's verdict.
 */
export type AclWording = 'sentence' | 'step';

/**
 * The part of ovnkube-observ's message after "<verb> by " (model.ACLEvent.String()), or
 * undefined for owner types it does not know and owners lacking the value the phrase is about.
 * Where ovnkube-observ would print an empty slot ("direction " for an ACL without a direction
 * key), the clause is left out, as it leaves out "in namespace" for a policy without one.
 */
function ownerPhrase(owner: PolicyOwner, wording: AclWording): string | undefined {
  const { name, namespace } = owner;
  const direction = owner.direction === undefined || wording === 'step' ? '' : `, direction ${owner.direction}`;
  switch (owner.type) {
    case OwnerType.AdminNetworkPolicy:
      return name === undefined ? undefined : `admin network policy ${name}${direction}`;
    case OwnerType.BaselineAdminNetworkPolicy:
      return name === undefined ? undefined : `baseline admin network policy ${name}${direction}`;
    case OwnerType.MulticastNamespace:
      return namespace === undefined ? undefined : `multicast in namespace ${namespace}${direction}`;
    case OwnerType.MulticastCluster:
      return `cluster multicast policy${direction}`;
    case OwnerType.NetpolNode:
      return `default allow from local node policy${direction}`;
    case OwnerType.NetworkPolicy:
      if (name === undefined) {
        return undefined;
      }
      return namespace === undefined
        ? `network policy ${name}${direction}`
        : `network policy ${name} in namespace ${namespace}${direction}`;
    case OwnerType.NetpolNamespace:
      return namespace === undefined ? undefined : `network policies isolation in namespace ${namespace}${direction}`;
    case OwnerType.EgressFirewall:
      return namespace === undefined ? undefined : `egress firewall in namespace ${namespace}`;
    case OwnerType.UDNIsolation:
      return name === undefined ? undefined : `UDN isolation of type ${name}`;
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
 * shop, direction Ingress" (or, worded as a chain step, "Allowed by network policy web in
 * namespace shop"). ACLs it cannot attribute to Kubernetes (no owner, an owner type it does not
 * know, or an owner without the name its sentence needs) are named as OVN ACLs.
 */
export function aclMessage(action: string, owner: PolicyOwner | undefined, acl: AclReference, wording: AclWording = 'sentence'): string {
  const verb = wording === 'step' && action === 'pass' ? 'Delegated' : actionVerb(action);
  const phrase = owner === undefined ? undefined : ownerPhrase(owner, wording);
  if (phrase !== undefined) {
    return `${verb} by ${phrase}`;
  }
  const what = acl.name !== undefined && acl.name !== '' ? `OVN ACL "${acl.name}"` : `OVN ACL ${acl.uuid}`;
  const ownedBy = owner === undefined ? '' : ` (owner type ${owner.type})`;
  return `${verb} by ${what}${ownedBy}`;
}
