import { beforeAll, describe, expect, it } from 'vitest';
import { decodeOvsCookie, splitOvnObsDomain, type PsampleMessage } from '../../src/index';
import { aclExternalIdsOfPoint, podOf, startOvnkNode, type OvnkNode } from './support/ovnk-node';
import { collectSamples } from './support/samples';
import { settle, traffic } from './support/shell';
import { openPsampleForEachTest } from './support/sockets';

// OVN 25.03 ACL sampling on a node shaped like ovn-kubernetes renders it
// (support/ovnk-node.sh). Each case sends pings between pod namespaces and
// asserts which (sampling app, datapath, observation point) triples the
// samples carry, and that the point names the ACL of the policy that decided.

interface Verdict {
  app: keyof OvnkNode['apps'];
  point: keyof OvnkNode['points'];
}

interface Case {
  title: string;
  from: string;
  to: string;
  pings: number;
  verdicts: Verdict[];
  /** external_ids ovn-kubernetes puts on the ACL that decided. */
  policy: Record<string, string>;
}

const CASES: Case[] = [
  {
    title: 'NetworkPolicy allow: the first packet as a new connection, the rest as established',
    from: 'shop_frontend',
    to: 'shop_backend',
    pings: 3,
    verdicts: [
      { app: 'aclNew', point: 'netpolAllow' },
      { app: 'aclEst', point: 'netpolAllow' },
    ],
    policy: {
      'k8s.ovn.org/owner-type': 'NetworkPolicy',
      'k8s.ovn.org/name': 'shop:allow-frontend',
      'k8s.ovn.org/id': 'default-network-controller:NetworkPolicy:shop:allow-frontend:ingress:0:-1:-1',
      direction: 'ingress',
    },
  },
  {
    title: "namespace default deny: a pod no policy allows into is dropped",
    from: 'shop_frontend',
    to: 'shop_db',
    pings: 1,
    verdicts: [{ app: 'aclNew', point: 'defaultDeny' }],
    policy: {
      'k8s.ovn.org/owner-type': 'NetpolNamespace',
      'k8s.ovn.org/name': 'shop',
      'k8s.ovn.org/id': 'default-network-controller:NetpolNamespace:shop:Ingress:defaultDeny',
      direction: 'Ingress',
      type: 'defaultDeny',
    },
  },
  {
    title: 'AdminNetworkPolicy pass: tier 1 passes, then the namespace default deny drops',
    from: 'tenant-b_client',
    to: 'shop_backend',
    pings: 1,
    verdicts: [
      { app: 'aclNew', point: 'anpPass' },
      { app: 'aclNew', point: 'defaultDeny' },
    ],
    policy: {
      'k8s.ovn.org/owner-type': 'AdminNetworkPolicy',
      'k8s.ovn.org/name': 'pass-monitoring',
      'k8s.ovn.org/id': 'default-network-controller:AdminNetworkPolicy:pass-monitoring:Ingress:0:None',
      direction: 'Ingress',
    },
  },
  {
    title: 'EgressFirewall drop: a shop pod may not leave the cluster',
    from: 'shop_frontend',
    to: 'ext_host',
    pings: 1,
    verdicts: [{ app: 'aclNew', point: 'egressFirewall' }],
    policy: {
      'k8s.ovn.org/owner-type': 'EgressFirewall',
      'k8s.ovn.org/name': 'shop',
      'k8s.ovn.org/id': 'default-network-controller:EgressFirewall:shop:10000',
      'rule-idx': '0',
    },
  },
];

interface Triple {
  appId: number;
  datapathKey: number;
  pointId: number;
}

function tripleOf(sample: PsampleMessage): Triple {
  const ids = decodeOvsCookie(sample.userCookie ?? new Uint8Array());
  if (ids === undefined) throw new Error(`sample without an OVS cookie: ${JSON.stringify(sample.userCookie)}`);
  const { appId, datapathKey } = splitOvnObsDomain(ids.obsDomainId);
  return { appId, datapathKey, pointId: ids.obsPointId };
}

function distinct(triples: Triple[]): Triple[] {
  const byKey = new Map(triples.map((t) => [`${t.appId}/${t.datapathKey}/${t.pointId}`, t]));
  return [...byKey.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, t]) => t);
}

describe('OVN ACL sampling on an ovn-kubernetes-shaped node (real OVN 25.03)', () => {
  const open = openPsampleForEachTest();
  let node: OvnkNode;

  beforeAll(() => {
    node = startOvnkNode();
  });

  for (const testCase of CASES) {
    it(testCase.title, async () => {
      const socket = open({ groups: [node.psampleGroup] });
      const expected = distinct(
        testCase.verdicts.map((v) => ({
          appId: node.apps[v.app],
          datapathKey: node.datapathKey,
          pointId: node.points[v.point],
        })),
      );
      const seen: PsampleMessage[] = [];
      socket.on('sample', (sample: PsampleMessage) => seen.push(sample));
      const pending = collectSamples(
        socket,
        (samples) => distinct(samples.map(tripleOf)).length >= expected.length,
        `samples for ${expected.map((t) => `${t.appId}/${t.datapathKey}/${t.pointId}`).join(', ')}`,
      );
      const target = podOf(node, testCase.to).ip;
      await traffic(testCase.from, 'ping', ['-c', String(testCase.pings), '-i', '0.3', '-W', '1', target]);
      await pending;
      await settle(500);

      expect(distinct(seen.map(tripleOf))).toEqual(expected);
      for (const sample of seen) {
        expect(sample).toMatchObject({ group: node.psampleGroup, probability: true, rate: 0xffffffff });
      }
      const decidingPoint = node.points[testCase.verdicts[0]?.point ?? 'netpolAllow'];
      expect(aclExternalIdsOfPoint(decidingPoint)).toMatchObject(testCase.policy);
    });
  }
});
