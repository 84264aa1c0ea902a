/**
 * The OVN northbound state the decode tests decode against: ovn-kubernetes' sampling apps and
 * collector, and namespace payments' egress firewall rule 3 (drop 203.0.113.0/24) in the
 * namespace's port group, with a Sample.
 */
import {
  dbObjectIds,
  DEFAULT_NETWORK_CONTROLLER,
  egressFirewallAcl,
  namespacePortGroupName,
  type NorthboundTransaction,
} from '../../ovn/support/ovnk-fixtures';

export const PAYMENTS_FIREWALL = egressFirewallAcl({ namespace: 'payments', ruleIndex: 3, destination: '203.0.113.0/24', action: 'drop' });

/** Adds the sampling apps, a collector and PAYMENTS_FIREWALL with its port group to `nb`. */
export function addPaymentsFirewall(nb: NorthboundTransaction): void {
  nb.samplingApps();
  const collector = nb.collector();
  const acl = nb.acl(PAYMENTS_FIREWALL, { collector });
  nb.portGroup({
    name: namespacePortGroupName('payments'),
    externalIds: dbObjectIds(DEFAULT_NETWORK_CONTROLLER, 'Namespace', [['k8s.ovn.org/name', 'payments']]),
    acls: [acl],
  });
}
