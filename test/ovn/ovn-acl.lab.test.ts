import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OvnSampleDecoder, type PsampleMessage } from '../../src/index';
import { podOf, startOvnkNode, type OvnkNode } from '../support/lab/ovnk-node';
import { collectSamples, tripleOf, type Triple } from '../support/lab/samples';
import { settle, traffic } from '../support/lab/shell';
import { openPsampleForEachTest } from '../support/lab/sockets';

// OVN 25.03 ACL sampling on a node shaped like ovn-kubernetes renders it
// (support/ovnk-node.sh). Each case sends pings between pod namespaces and
// asserts the exact (sampling app, datapath, observation point) triples the
// samples carry, then what the OVN decoder says about each of them, resolved
// live from the node's northbound and southbound databases.

/** What the decoder must say about the samples of one ACL. */
interface Decoded {
  action: string;
  message: string;
  owner: { type: string; namespace?: string; name?: string; direction: string; id: string };
}

interface Verdict {
  app: 'aclNew' | 'aclEst';
  point: keyof OvnkNode['points'];
  decoded: Decoded;
}

interface Case {
  title: string;
  from: string;
  to: string;
  pings: number;
  /** In the order the first packet meets them. */
  verdicts: [Verdict, ...Verdict[]];
}

const APP_NAMES = { aclNew: 'acl-new', aclEst: 'acl-est' } as const;

const NETWORK_POLICY_ALLOW: Decoded = {
  action: 'allow-related',
  message: 'Allowed by network policy allow-frontend in namespace shop, direction Ingress',
  owner: {
    type: 'NetworkPolicy',
    namespace: 'shop',
    name: 'allow-frontend',
    direction: 'Ingress',
    id: 'default-network-controller:NetworkPolicy:shop:allow-frontend:Ingress:0:-1:-1',
  },
};
const DEFAULT_DENY: Decoded = {
  action: 'drop',
  message: 'Dropped by network policies isolation in namespace shop, direction Ingress',
  owner: {
    type: 'NetpolNamespace',
    namespace: 'shop',
    direction: 'Ingress',
    id: 'default-network-controller:NetpolNamespace:shop:Ingress:defaultDeny',
  },
};
const ADMIN_PASS: Decoded = {
  action: 'pass',
  message: 'Delegated to network policy by admin network policy pass-monitoring, direction Ingress',
  owner: {
    type: 'AdminNetworkPolicy',
    name: 'pass-monitoring',
    direction: 'Ingress',
    id: 'default-network-controller:AdminNetworkPolicy:pass-monitoring:Ingress:0:None',
  },
};
const EGRESS_FIREWALL_DROP: Decoded = {
  action: 'drop',
  message: 'Dropped by egress firewall in namespace shop',
  owner: {
    type: 'EgressFirewall',
    namespace: 'shop',
    direction: 'Egress',
    id: 'default-network-controller:EgressFirewall:shop:10000',
  },
};

const CASES: Case[] = [
  {
    title: 'NetworkPolicy allow: the first packet as a new connection, the rest as established',
    from: 'shop_frontend',
    to: 'shop_backend',
    pings: 3,
    verdicts: [
      { app: 'aclNew', point: 'netpolAllow', decoded: NETWORK_POLICY_ALLOW },
      { app: 'aclEst', point: 'netpolAllow', decoded: NETWORK_POLICY_ALLOW },
    ],
  },
  {
    title: 'namespace default deny: a pod no policy allows into is dropped',
    from: 'shop_frontend',
    to: 'shop_db',
    pings: 1,
    verdicts: [{ app: 'aclNew', point: 'defaultDeny', decoded: DEFAULT_DENY }],
  },
  {
    title: 'AdminNetworkPolicy pass: tier 1 passes, then the namespace default deny drops',
    from: 'tenant-b_client',
    to: 'shop_backend',
    pings: 1,
    verdicts: [
      { app: 'aclNew', point: 'anpPass', decoded: ADMIN_PASS },
      { app: 'aclNew', point: 'defaultDeny', decoded: DEFAULT_DENY },
    ],
  },
  {
    title: 'EgressFirewall drop: a shop pod may not leave the cluster',
    from: 'shop_frontend',
    to: 'ext_host',
    pings: 1,
    verdicts: [{ app: 'aclNew', point: 'egressFirewall', decoded: EGRESS_FIREWALL_DROP }],
  },
];

const keyOf = (t: Triple): string => `${t.appId}/${t.datapathKey}/${t.pointId}`;

function distinct(triples: Triple[]): Triple[] {
  const byKey = new Map(triples.map((t) => [keyOf(t), t]));
  return [...byKey.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, t]) => t);
}

describe('OVN ACL sampling on an ovn-kubernetes-shaped node (real OVN 25.03)', () => {
  const open = openPsampleForEachTest();
  let node: OvnkNode;
  let decoder: OvnSampleDecoder;

  beforeAll(async () => {
    node = startOvnkNode();
    decoder = new OvnSampleDecoder({ nb: node.northbound, sb: node.southbound });
    await decoder.start();
  });
  afterAll(() => decoder.close());

  for (const testCase of CASES) {
    it(testCase.title, async () => {
      const socket = open({ groups: [node.psampleGroup] });
      const tripleOfVerdict = (v: Verdict): Triple => ({
        appId: node.apps[v.app],
        datapathKey: node.datapathKey,
        pointId: node.points[v.point],
      });
      const expected = distinct(testCase.verdicts.map(tripleOfVerdict));
      const verdictByTriple = new Map(testCase.verdicts.map((v) => [keyOf(tripleOfVerdict(v)), v]));
      const seen: PsampleMessage[] = [];
      socket.on('sample', (sample: PsampleMessage) => seen.push(sample));
      const pending = collectSamples(
        socket,
        (samples) => distinct(samples.map(tripleOf)).length >= expected.length,
        `samples for ${expected.map(keyOf).join(', ')}`,
      );
      const target = podOf(node, testCase.to).ip;
      await traffic(testCase.from, 'ping', ['-c', String(testCase.pings), '-i', '0.3', '-W', '1', target]);
      await pending;
      await settle(500);

      expect(distinct(seen.map(tripleOf))).toEqual(expected);
      // The first packet meets the first verdict: the new connection, or tier 1 before tier 2.
      expect(tripleOf(seen[0] as PsampleMessage)).toEqual(tripleOfVerdict(testCase.verdicts[0]));
      for (const sample of seen) {
        expect(sample).toMatchObject({ group: node.psampleGroup, probability: true, rate: 0xffffffff });
        // Every sample's triple is an expected one (asserted above), so it has its verdict.
        const verdict = verdictByTriple.get(keyOf(tripleOf(sample))) as Verdict;
        expect(decoder.decodeSample(sample)).toMatchObject({
          status: 'decoded',
          app: APP_NAMES[verdict.app],
          action: verdict.decoded.action,
          message: verdict.decoded.message,
          owner: verdict.decoded.owner,
          datapath: { key: node.datapathKey, switch: node.node },
        });
      }
    });
  }
});
