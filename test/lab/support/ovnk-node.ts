import { run } from './shell';

export interface OvnkPod {
  port: string;
  netns: string;
  namespace: string;
  ip: string;
  mac: string;
}

/** What test/lab/support/ovnk-node.sh built, as it prints it. */
export interface OvnkNode {
  node: string;
  datapathKey: number;
  psampleGroup: number;
  collectorSetId: number;
  apps: { drop: number; aclNew: number; aclEst: number };
  points: { netpolAllow: number; defaultDeny: number; anpPass: number; egressFirewall: number };
  pods: OvnkPod[];
}

export function startOvnkNode(): OvnkNode {
  return JSON.parse(run('bash', [`${__dirname}/ovnk-node.sh`, 'up'])) as OvnkNode;
}

export function podOf(node: OvnkNode, port: string): OvnkPod {
  const pod = node.pods.find((p) => p.port === port);
  if (pod === undefined) throw new Error(`ovnk-node.sh built no pod ${port}`);
  return pod;
}

/** external_ids of the ACL whose sample_new carries observation point POINT (read back from the northbound db). */
export function aclExternalIdsOfPoint(point: number): Record<string, string> {
  const sample = run('ovn-nbctl', ['--bare', '--columns=_uuid', 'find', 'Sample', `metadata=${point}`]).trim();
  const ids = run('ovn-nbctl', ['--format=json', '--columns=external_ids', 'find', 'ACL', `sample_new=${sample}`]);
  const table = JSON.parse(ids) as { data: [['map', [string, string][]]][] };
  const row = table.data[0];
  if (row === undefined) throw new Error(`no ACL samples point ${point}`);
  return Object.fromEntries(row[0][1]);
}
