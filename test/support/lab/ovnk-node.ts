import { run } from './shell';

export interface OvnkPod {
  port: string;
  netns: string;
  namespace: string;
  ip: string;
  mac: string;
}

/** What test/support/lab/ovnk-node.sh built, as it prints it. */
export interface OvnkNode {
  node: string;
  datapathKey: number;
  psampleGroup: number;
  collectorSetId: number;
  /** OVSDB remotes of the OVN databases ovn-ctl started. */
  northbound: string;
  southbound: string;
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

/**
 * Gives br-int the collector set ovn-kubernetes would (id `collectorSetId`, psample group
 * `psampleGroup`) unless one with that id is there; returns whether it made it, so the caller
 * removes only what it made.
 */
export function ensureCollectorSet(node: OvnkNode): boolean {
  if (run('ovs-vsctl', ['--bare', '--columns=_uuid', 'find', 'Flow_Sample_Collector_Set', `id=${node.collectorSetId}`]).trim() !== '') {
    return false;
  }
  run('ovs-vsctl', [
    '--',
    '--id=@br',
    'get',
    'Bridge',
    'br-int',
    '--',
    'create',
    'Flow_Sample_Collector_Set',
    'bridge=@br',
    `id=${node.collectorSetId}`,
    `local_group_id=${node.psampleGroup}`,
  ]);
  return true;
}

/**
 * Makes the node's collector set export IPFIX to `target` beside its psample group, as OVN's
 * system tests set IPFIX up (an IPFIX row no ovn-psample process owns); returns the set's uuid.
 * OVS sends a domain's templates with its first record, then every `templateIntervalS` seconds
 * (OVS's default 600), and keeps that clock as long as the set's exporter lives, across a new row
 * or new targets (ofproto-dpif-ipfix.c, a domain's last_template_set_time): a collector that starts
 * listening after a domain was heard decodes nothing of it until then. A short interval costs a
 * burst of the domain's templates (88 of them) with a record every interval.
 */
export function exportIpfix(node: OvnkNode, target: string, { templateIntervalS }: { templateIntervalS?: number } = {}): string {
  const setUuid = run('ovs-vsctl', ['--bare', '--columns=_uuid', 'find', 'Flow_Sample_Collector_Set', `id=${node.collectorSetId}`]).trim();
  run('ovs-vsctl', [
    '--',
    '--id=@i',
    'create',
    'IPFIX',
    `targets="${target}"`,
    ...(templateIntervalS === undefined ? [] : [`template_interval=${templateIntervalS}`]),
    '--',
    'set',
    'Flow_Sample_Collector_Set',
    setUuid,
    'ipfix=@i',
  ]);
  return setUuid;
}
