import { aclMessage, OwnerType } from '../ovn/owner';
import { aclExplainsDrop } from '../ovn/sample-resolver';
import type { OvnSampleEvent } from '../ovn/event';

/** What one step of OVN's pipeline did with a packet. */
export type Verdict = 'allow' | 'drop' | 'pass' | 'reject' | 'unknown';

export const VERDICTS: readonly Exclude<Verdict, 'unknown'>[] = ['allow', 'drop', 'pass', 'reject'];

export function verdictOf(action: string | undefined): Verdict {
  switch (action) {
    case 'allow':
    case 'allow-related':
    case 'allow-stateless':
      return 'allow';
    case 'drop':
      return 'drop';
    case 'reject':
      return 'reject';
    case 'pass':
      return 'pass';
    default:
      return 'unknown';
  }
}

/**
 * A short name of what decided, for a column: "np:shop/allow-frontend", "anp:pass-monitoring",
 * "isolation:shop", "egress-firewall:shop", "acl:<name>", "flow:<stage>".
 */
export function policyLabel(event: OvnSampleEvent): string {
  const owner = event.owner;
  if (owner !== undefined) {
    switch (owner.type) {
      case OwnerType.NetworkPolicy:
        return `np:${owner.namespace === undefined ? '' : `${owner.namespace}/`}${owner.name ?? ''}`;
      case OwnerType.AdminNetworkPolicy:
        return `anp:${owner.name ?? ''}`;
      case OwnerType.BaselineAdminNetworkPolicy:
        return `banp:${owner.name ?? ''}`;
      case OwnerType.NetpolNamespace:
        return `isolation:${owner.namespace ?? ''}`;
      case OwnerType.EgressFirewall:
        return `egress-firewall:${owner.namespace ?? ''}`;
      case OwnerType.MulticastNamespace:
        return `multicast:${owner.namespace ?? ''}`;
      case OwnerType.MulticastCluster:
        return 'multicast:cluster';
      case OwnerType.NetpolNode:
        return 'node-allow';
      case OwnerType.UDNIsolation:
        return `udn-isolation:${owner.name ?? ''}`;
      default:
        return owner.type;
    }
  }
  if (event.acl !== undefined) return `acl:${event.acl.name ?? event.acl.uuid.slice(0, 8)}`;
  if (event.flow !== undefined) return `flow:${event.flow.stage ?? event.flow.uuid.slice(0, 8)}`;
  return event.status === 'decoded' ? '-' : event.status;
}

/**
 * One step of a verdict chain: the decoder's words for what decided, worded as a step
 * ("Delegated by admin network policy pass-monitoring"), or the logical flow's sentence.
 */
export function stepText(event: OvnSampleEvent): string {
  if (event.status !== 'decoded') return `${event.status === 'stale' ? 'Stale' : 'Unknown'} sample (${event.reason ?? 'unknown'})`;
  const acl = event.acl;
  if (acl !== undefined && (event.flow === undefined || aclExplainsDrop({ owner: event.owner, action: acl.action }))) {
    return aclMessage(acl.action, event.owner, acl, 'step');
  }
  return event.message;
}
