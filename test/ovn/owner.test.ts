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
    expect(
      messageOf(networkPolicyAcl({ namespace: 'shop', policy: 'allow-web', direction: 'Ingress', peerMatch: 'ip4.src == {$a1}' })),
    ).toBe('Allowed by network policy allow-web in namespace shop, direction Ingress');
    expect(
      messageOf(
        networkPolicyAcl({
          namespace: 'shop',
          policy: 'out',
          direction: 'Egress',
          peerMatch: 'ip4.dst == 10.0.0.0/8',
          action: 'allow-stateless',
        }),
      ),
    ).toBe('Allowed by network policy out in namespace shop, direction Egress');
    expect(
      messageOf(
        adminNetworkPolicyAcl({
          name: 'cluster-control',
          direction: 'Egress',
          gressIndex: 2,
          priority: 28000,
          peerMatch: 'ip4.dst == $a9',
          action: 'pass',
        }),
      ),
    ).toBe('Delegated to network policy by admin network policy cluster-control, direction Egress');
    expect(
      messageOf(
        adminNetworkPolicyAcl({
          name: 'default',
          baseline: true,
          direction: 'Ingress',
          gressIndex: 0,
          priority: 1750,
          peerMatch: 'ip4.src == $a3',
          action: 'drop',
        }),
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
    expect(messageOf(multicastNamespaceAcl({ namespace: 'video', direction: 'Egress' }))).toBe(
      'Allowed by multicast in namespace video, direction Egress',
    );
    expect(messageOf(multicastClusterAcl({ type: 'DefaultDeny', direction: 'Ingress' }))).toBe(
      'Dropped by cluster multicast policy, direction Ingress',
    );
    expect(messageOf(egressFirewallAcl({ namespace: 'shop', ruleIndex: 1, destination: '8.8.8.8/32', action: 'drop' }))).toBe(
      'Dropped by egress firewall in namespace shop',
    );
    expect(messageOf(udnIsolationAcl({ name: 'DenySecondary', direction: 'Egress' }))).toBe(
      'Dropped by UDN isolation of type DenySecondary',
    );
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
    expect(policyOwner(new Map(Object.entries(firewall.externalIds)))).toMatchObject({
      type: 'EgressFirewall',
      namespace: 'shop',
      direction: 'Egress',
    });
  });

  /**
   * ovnkube-observ (ovn-kubernetes go-controller/observability-lib: sampledecoder newACLEvent()
   * and model.ACLEvent.String()) splits a NetworkPolicy's name at the first ":" and prints
   * "in namespace" only for a non-empty namespace; it refuses a name without a colon (or no name
   * key) with "expected format namespace:name for Object Name". Where it would print an empty
   * slot, the sentence here leaves the clause out or names the OVN ACL instead.
   */
  const u = { uuid: '0f1e2d3c-0000-4000-8000-000000000000' };
  const sentence = (ids: [string, string][], action = 'allow') => aclMessage(action, policyOwner(new Map(ids)), u);
  const np = (name: string | undefined, direction: string | null = 'Ingress'): [string, string][] => [
    ['k8s.ovn.org/owner-type', 'NetworkPolicy'],
    ...(name === undefined ? [] : [['k8s.ovn.org/name', name] as [string, string]]),
    ...(direction === null ? [] : [['direction', direction] as [string, string]]),
  ];

  it('matches ovnkube-observ for network policy names, and never prints an empty slot', () => {
    expect(sentence(np('bar:foo'))).toBe('Allowed by network policy foo in namespace bar, direction Ingress');
    // Split at the first colon only, as strings.SplitN(name, ":", 2).
    expect(sentence(np('bar:foo:baz'))).toBe('Allowed by network policy foo:baz in namespace bar, direction Ingress');
    // An empty namespace: ovnkube-observ leaves the clause out too.
    expect(sentence(np(':foo'))).toBe('Allowed by network policy foo, direction Ingress');
    expect(policyOwner(new Map(np(':foo')))).toMatchObject({ name: 'foo', namespace: undefined });
    // ovnkube-observ refuses these ("expected format namespace:name for Object Name"); they are named, not refused.
    expect(sentence(np('legacy'))).toBe('Allowed by network policy legacy, direction Ingress');
    expect(sentence(np(undefined))).toBe(`Allowed by OVN ACL ${u.uuid} (owner type NetworkPolicy)`);
    expect(sentence(np(''))).toBe(`Allowed by OVN ACL ${u.uuid} (owner type NetworkPolicy)`);
    // ovnkube-observ would print "network policy  in namespace shop": no name to print.
    expect(sentence(np('shop:'))).toBe(`Allowed by OVN ACL ${u.uuid} (owner type NetworkPolicy)`);
    // ovnkube-observ would print "direction " with nothing after it.
    expect(sentence(np('shop:web', null))).toBe('Allowed by network policy web in namespace shop');
  });

  it('matches ovnkube-observ for every other owner type, leaving out clauses it would print empty', () => {
    const owned = (type: string, ids: [string, string][] = []): [string, string][] => [['k8s.ovn.org/owner-type', type], ...ids];
    expect(
      sentence(
        owned('AdminNetworkPolicy', [
          ['k8s.ovn.org/name', 'foo'],
          ['direction', 'Ingress'],
        ]),
      ),
    ).toBe('Allowed by admin network policy foo, direction Ingress');
    expect(sentence(owned('AdminNetworkPolicy', [['k8s.ovn.org/name', 'foo']]))).toBe('Allowed by admin network policy foo');
    expect(sentence(owned('AdminNetworkPolicy', [['direction', 'Ingress']]))).toBe(
      `Allowed by OVN ACL ${u.uuid} (owner type AdminNetworkPolicy)`,
    );
    expect(
      sentence(
        owned('BaselineAdminNetworkPolicy', [
          ['k8s.ovn.org/name', 'default'],
          ['direction', 'Egress'],
        ]),
        'drop',
      ),
    ).toBe('Dropped by baseline admin network policy default, direction Egress');
    expect(sentence(owned('EgressFirewall', [['k8s.ovn.org/name', 'foo']]))).toBe('Allowed by egress firewall in namespace foo');
    expect(policyOwner(new Map(owned('EgressFirewall', [['k8s.ovn.org/name', 'foo']])))!.direction).toBe('Egress');
    expect(sentence(owned('EgressFirewall'))).toBe(`Allowed by OVN ACL ${u.uuid} (owner type EgressFirewall)`);
    expect(sentence(owned('NetpolNode'))).toBe('Allowed by default allow from local node policy, direction Ingress');
    expect(policyOwner(new Map(owned('NetpolNode')))!.direction).toBe('Ingress');
    expect(sentence(owned('MulticastCluster'), 'drop')).toBe('Dropped by cluster multicast policy');
    expect(sentence(owned('MulticastNS', [['direction', 'Egress']]))).toBe(`Allowed by OVN ACL ${u.uuid} (owner type MulticastNS)`);
    expect(sentence(owned('NetpolNamespace', [['k8s.ovn.org/name', 'shop']]), 'drop')).toBe(
      'Dropped by network policies isolation in namespace shop',
    );
    expect(sentence(owned('UDNIsolation'), 'drop')).toBe(`Dropped by OVN ACL ${u.uuid} (owner type UDNIsolation)`);
    // ovnkube-observ prints "Allowed by " for an owner type it does not know.
    expect(sentence(owned('SomethingNew'))).toBe(`Allowed by OVN ACL ${u.uuid} (owner type SomethingNew)`);
  });

  it('words an ACL as a verdict-chain step: no direction, "Delegated by" for pass', () => {
    const anp = adminNetworkPolicyAcl({
      name: 'pass-monitoring',
      direction: 'Ingress',
      gressIndex: 0,
      priority: 28000,
      peerMatch: 'ip4.src == $a1',
      action: 'pass',
    });
    const isolation = netpolNamespaceAcl({ namespace: 'shop', direction: 'Ingress', type: 'defaultDeny' });
    const step = (acl: OvnkAcl): string =>
      aclMessage(acl.action, policyOwner(new Map(Object.entries(acl.externalIds))), { uuid: 'u' }, 'step');
    expect(step(anp)).toBe('Delegated by admin network policy pass-monitoring');
    expect(step(isolation)).toBe('Dropped by network policies isolation in namespace shop');
    expect(aclMessage('allow', undefined, { uuid: 'u', name: 'web-in' }, 'step')).toBe('Allowed by OVN ACL "web-in"');
  });

  it('names ACLs that no Kubernetes owner explains as OVN ACLs', () => {
    expect(aclMessage('drop', undefined, { uuid: '6f9619ff-8b86-d011-b42d-00c04fc964ff' })).toBe(
      'Dropped by OVN ACL 6f9619ff-8b86-d011-b42d-00c04fc964ff',
    );
    expect(aclMessage('allow', undefined, { uuid: 'u', name: 'web-in' })).toBe('Allowed by OVN ACL "web-in"');
    const foreign = policyOwner(new Map([['k8s.ovn.org/owner-type', 'SomethingNew']]));
    expect(aclMessage('allow', foreign, { uuid: 'u' })).toBe('Allowed by OVN ACL u (owner type SomethingNew)');
  });
});
