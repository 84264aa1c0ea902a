import { describe, expect, it } from 'vitest';
import { aclMessage, actionVerb, policyOwner } from '../../src/ovn/owner';
import {
  adminNetworkPolicyAcl,
  egressFirewallAcl,
  multicastClusterAcl,
  multicastNamespaceAcl,
  netpolNamespaceAcl,
  netpolNodeAcl,
  networkPolicyAcl,
  udnIsolationAcl,
  type OvnkAcl,
} from './support/ovnk-fixtures';

function messageOf(acl: OvnkAcl): string {
  const owner = policyOwner(new Map(Object.entries(acl.externalIds)));
  return aclMessage(acl.action, owner, { uuid: '0f1e2d3c-0000-4000-8000-000000000000' });
}

describe('ovnkube-observ messages', () => {
  it('words actions like model.ACLEvent', () => {
    expect(actionVerb('allow')).toBe('Allowed');
    expect(actionVerb('allow-related')).toBe('Allowed');
    expect(actionVerb('allow-stateless')).toBe('Allowed');
    expect(actionVerb('drop')).toBe('Dropped');
    expect(actionVerb('pass')).toBe('Delegated to network policy');
    expect(actionVerb('reject')).toBe('Action reject');
  });

  it('names every owner type ovn-kubernetes samples', () => {
    expect(messageOf(networkPolicyAcl({ namespace: 'shop', policy: 'allow-web', direction: 'Ingress', peerMatch: 'ip4.src == {$a1}' }))).toBe(
      'Allowed by network policy allow-web in namespace shop, direction Ingress',
    );
    expect(messageOf(networkPolicyAcl({ namespace: 'shop', policy: 'out', direction: 'Egress', peerMatch: 'ip4.dst == 10.0.0.0/8', action: 'allow-stateless' }))).toBe(
      'Allowed by network policy out in namespace shop, direction Egress',
    );
    expect(
      messageOf(adminNetworkPolicyAcl({ name: 'cluster-control', direction: 'Egress', gressIndex: 2, priority: 28000, peerMatch: 'ip4.dst == $a9', action: 'pass' })),
    ).toBe('Delegated to network policy by admin network policy cluster-control, direction Egress');
    expect(
      messageOf(
        adminNetworkPolicyAcl({ name: 'default', baseline: true, direction: 'Ingress', gressIndex: 0, priority: 1750, peerMatch: 'ip4.src == $a3', action: 'drop' }),
      ),
    ).toBe('Dropped by baseline admin network policy default, direction Ingress');
    expect(messageOf(netpolNamespaceAcl({ namespace: 'shop', direction: 'Ingress', type: 'defaultDeny' }))).toBe(
      'Dropped by network policies isolation in namespace shop, direction Ingress',
    );
    expect(messageOf(netpolNamespaceAcl({ namespace: 'shop', direction: 'Egress', type: 'arpAllow' }))).toBe(
      'Allowed by network policies isolation in namespace shop, direction Egress',
    );
    expect(messageOf(netpolNodeAcl({ node: 'worker-1', managementIp: '10.244.1.2' }))).toBe(
      'Allowed by default allow from local node policy, direction Ingress',
    );
    expect(messageOf(multicastNamespaceAcl({ namespace: 'video', direction: 'Egress' }))).toBe('Allowed by multicast in namespace video, direction Egress');
    expect(messageOf(multicastClusterAcl({ type: 'DefaultDeny', direction: 'Ingress' }))).toBe('Dropped by cluster multicast policy, direction Ingress');
    expect(messageOf(egressFirewallAcl({ namespace: 'shop', ruleIndex: 1, destination: '8.8.8.8/32', action: 'drop' }))).toBe(
      'Dropped by egress firewall in namespace shop',
    );
    expect(messageOf(udnIsolationAcl({ name: 'DenySecondary', direction: 'Egress' }))).toBe('Dropped by UDN isolation of type DenySecondary');
  });

  it('reads the structured owner from the external_ids', () => {
    const acl = networkPolicyAcl({ namespace: 'shop', policy: 'allow-web', direction: 'Ingress', peerMatch: 'ip4.src == {$a1}' });
    expect(policyOwner(new Map(Object.entries(acl.externalIds)))).toEqual({
      type: 'NetworkPolicy',
      namespace: 'shop',
      name: 'allow-web',
      direction: 'Ingress',
      controller: 'default-network-controller',
      id: 'default-network-controller:NetworkPolicy:shop:allow-web:Ingress:0:None:-1',
    });
    const firewall = egressFirewallAcl({ namespace: 'shop', ruleIndex: 0, destination: '1.1.1.1/32', action: 'allow' });
    expect(policyOwner(new Map(Object.entries(firewall.externalIds)))).toMatchObject({ type: 'EgressFirewall', namespace: 'shop', direction: 'Egress' });
  });

  it('keeps a network policy name without a namespace as the Go decoder would print it', () => {
    const owner = policyOwner(new Map([['k8s.ovn.org/owner-type', 'NetworkPolicy'], ['k8s.ovn.org/name', 'legacy'], ['direction', 'Ingress']]));
    expect(aclMessage('allow', owner, { uuid: 'u' })).toBe('Allowed by network policy legacy, direction Ingress');
  });

  it('names ACLs that no Kubernetes owner explains as OVN ACLs', () => {
    expect(aclMessage('drop', undefined, { uuid: '6f9619ff-8b86-d011-b42d-00c04fc964ff' })).toBe('Dropped by OVN ACL 6f9619ff-8b86-d011-b42d-00c04fc964ff');
    expect(aclMessage('allow', undefined, { uuid: 'u', name: 'web-in' })).toBe('Allowed by OVN ACL "web-in"');
    const foreign = policyOwner(new Map([['k8s.ovn.org/owner-type', 'SomethingNew']]));
    expect(aclMessage('allow', foreign, { uuid: 'u' })).toBe('Allowed by OVN ACL u (owner type SomethingNew)');
  });
});
