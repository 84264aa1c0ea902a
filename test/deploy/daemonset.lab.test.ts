import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureCollectorSet, podOf, startOvnkNode, type OvnkNode } from '../support/lab/ovnk-node';
import { run, settle, traffic } from '../support/lab/shell';
import { podman, podmanLogs } from '../support/podman';
import { daemonSetPod, type DaemonSetPod } from './support/daemonset-pod';

// The project's amd64 image (the one `npm run image` built from this checkout, brought on the
// payload by scripts/lab/project-image.sh), loaded into the guest's podman and run by `podman kube
// play` as the pod of deploy/overlays/ovn's DaemonSet (plain OVN's socket paths, which are this
// node's) on the ovn-kubernetes-shaped node (real OVS 3.5, OVN 25.03, kernel 6.12 psample): host
// network, NET_ADMIN alone, read-only root, the node's sockets mounted. The kubelet's part
// (daemonSetPod) puts the metrics on the loopback, where $(HOST_IP) would be.

const OVERLAY = path.join(__dirname, '..', '..', 'deploy', 'overlays', 'ovn');
const POD = 'ovn-psample-lab';
const METRICS_PORT = 9479;

interface Endpoint {
  kind: string;
  namespace?: string;
  name?: string;
  ip: string;
}
interface FlowRecord {
  type: 'flow' | 'interval';
  verdict: string;
  message: string;
  src: Endpoint;
  dst: Endpoint;
  protocol?: number;
  icmpType?: number;
  chain: { verdict: string; policy: string }[];
  sampledPackets: number;
  samples: number;
  packets: number;
}

async function get(url: string): Promise<[number, string]> {
  try {
    const response = await fetch(`http://127.0.0.1:${METRICS_PORT}${url}`);
    return [response.status, await response.text()];
  } catch {
    return [0, ''];
  }
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number, why: () => Promise<string>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${await why()}`);
    await settle(500);
  }
}

/** The value of each series of `metric` in a Prometheus text exposition, keyed by its labels' text. */
function series(exposition: string, metric: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const match of exposition.matchAll(new RegExp(`^${metric}\\{([^}]*)\\} (\\S+)$`, 'gm'))) values.set(match[1]!, Number(match[2]));
  return values;
}

/** The sum of the series whose labels hold every `label="value"` given. */
function sumOf(values: Map<string, number>, labels: Record<string, string>): number {
  let sum = 0;
  for (const [text, value] of values)
    if (Object.entries(labels).every(([label, wanted]) => text.includes(`${label}="${wanted}"`))) sum += value;
  return sum;
}

function collectorSets(): string {
  return run('ovs-vsctl', ['--bare', '--columns=id,local_group_id,external_ids', 'list', 'Flow_Sample_Collector_Set']).trim();
}

describe("deploy/'s DaemonSet pod in the guest's podman on a real OVN node", () => {
  let node: OvnkNode;
  let pod: DaemonSetPod;
  const file = `/tmp/${POD}.yaml`;
  const logs = (): Promise<string> => podmanLogs(pod.containerName).catch((error: unknown) => String(error));
  /** Ready: psample's group joined, the OVS, NB and SB databases synced, the collector set in place. */
  const ready = (): Promise<boolean> =>
    until('/readyz to turn ready', async () => ((await get('/readyz'))[0] === 200 ? true : undefined), 300_000, logs);
  /** The collector set as the pod's watch makes it: the node's set id and psample group, marked ours. */
  const madeByUs = (): RegExp => new RegExp(`^${node.collectorSetId}\\s+${node.psampleGroup}\\s+.*owner=ovn-psample`, 's');
  /** The pod's watch as the node sees it. */
  const containerPid = async (): Promise<number> =>
    Number((await podman('inspect', '--format', '{{.State.Pid}}', pod.containerName)).trim());

  beforeAll(async () => {
    node = startOvnkNode();
    // A node before anyone set observability up: the pod's --add-ovs-collector makes the set.
    for (const uuid of run('ovs-vsctl', ['--bare', '--columns=_uuid', 'find', 'Flow_Sample_Collector_Set', `id=${node.collectorSetId}`])
      .split(/\s+/)
      .filter(Boolean))
      run('ovs-vsctl', ['destroy', 'Flow_Sample_Collector_Set', uuid]);
    const archive = process.env.OVN_PSAMPLE_LAB_IMAGE;
    if (archive === undefined || !existsSync(archive))
      throw new Error(`no image archive at OVN_PSAMPLE_LAB_IMAGE (${archive}): scripts/lab/lab.sh test puts it on the payload`);
    const loaded = /^Loaded image(?:\(s\))?: (\S+)$/m.exec(await podman('load', '--input', archive))?.[1];
    if (loaded === undefined) throw new Error(`podman load named no image from ${archive}`);
    pod = daemonSetPod(execFileSync('kustomize', ['build', OVERLAY], { encoding: 'utf8' }), {
      name: POD,
      image: loaded,
      metricsPort: METRICS_PORT,
    });
    writeFileSync(file, pod.yaml);
  }, 600_000);

  afterAll(async () => {
    await podman('pod', 'rm', '--force', '--time', '0', POD).catch(() => undefined);
    rmSync(file, { force: true });
    // Leave the node as ovnk-node.sh built it, for the files that run after this one.
    ensureCollectorSet(node);
  });

  it("the overlay's socket paths are the node's, the pod turns ready and healthy with NET_ADMIN alone, the demo's traffic comes out as flow records with verdict chains and pods and as metrics, and stopping the pod removes the collector set it made", async () => {
    // Plain OVN's overlay mounts where this node's sockets are: nothing to patch but the image.
    expect(Object.fromEntries(pod.spec.volumes.map((volume) => [volume.name, volume.hostPath.path]))).toEqual({
      'run-openvswitch': '/var/run/openvswitch',
      'ovn-databases': '/var/run/ovn',
    });
    for (const socket of ['/var/run/openvswitch/db.sock', '/var/run/ovn/ovnnb_db.sock', '/var/run/ovn/ovnsb_db.sock'])
      expect(existsSync(socket), socket).toBe(true);
    expect(pod.container.args).toEqual(expect.arrayContaining(['--add-ovs-collector', '--drop-privileges', '--aggregate', '60']));
    expect(collectorSets()).toBe('');

    await podman('kube', 'play', file);
    expect(await ready()).toBe(true);
    expect(await get('/readyz')).toEqual([200, 'ready\n']);
    expect(await get('/healthz')).toEqual([200, 'ok\n']);
    expect(collectorSets()).toMatch(madeByUs());
    // NET_ADMIN is the pod's only capability, and --drop-privileges gave even that up once joined.
    const pid = await containerPid();
    const status = readFileSync(`/proc/${pid}/status`, 'latin1');
    expect(status).toMatch(/^CapBnd:\s+0000000000001000$/m);
    expect(status).toMatch(/^CapEff:\s+0000000000000000$/m);

    // The demo's traffic: an allowed connection, an isolation drop, the ANP pass chain, the egress firewall.
    const ping = (from: string, to: string, count: number): Promise<void> =>
      traffic(from, 'ping', ['-c', String(count), '-i', '0.3', '-W', '1', podOf(node, to).ip]);
    await ping('shop_frontend', 'shop_backend', 3);
    await ping('shop_frontend', 'shop_db', 2);
    await ping('tenant-b_client', 'shop_backend', 1);
    await ping('shop_frontend', 'ext_host', 1);

    // Counted per packet in the metrics while the records wait for the interval's end.
    const wanted: { labels: Record<string, string>; atLeast: number }[] = [
      { labels: { action: 'allow', owner_type: 'NetworkPolicy', namespace: 'shop' }, atLeast: 3 },
      { labels: { action: 'drop', owner_type: 'NetpolNamespace', namespace: 'shop' }, atLeast: 3 },
      { labels: { action: 'pass', owner_type: 'AdminNetworkPolicy', policy: 'pass-monitoring' }, atLeast: 1 },
      { labels: { action: 'drop', owner_type: 'EgressFirewall', namespace: 'shop' }, atLeast: 1 },
    ];
    const exposition = await until(
      'the verdicts in the metrics',
      async () => {
        const [, body] = await get('/metrics');
        const verdicts = series(body, 'ovn_psample_verdicts_total');
        return wanted.every(({ labels, atLeast }) => sumOf(verdicts, labels) >= atLeast) ? body : undefined;
      },
      60_000,
      async () => (await get('/metrics'))[1],
    );
    expect(sumOf(series(exposition, 'ovn_psample_samples_total'), { group: String(node.psampleGroup) })).toBeGreaterThanOrEqual(8);
    expect(sumOf(series(exposition, 'ovn_psample_decodes_total'), { outcome: 'decoded' })).toBeGreaterThan(0);
    await settle(1000);

    // What a kubelet does to a pod it deletes: SIGTERM, then the grace period.
    await podman('pod', 'stop', '--time', '30', POD);
    expect(Number((await podman('wait', pod.containerName)).trim())).toBe(0);
    const output = await logs();
    expect(output).toMatch(/"msg":"SIGTERM: stopping"/);
    expect(output).toMatch(/"msg":"removed Flow_Sample_Collector_Set 42 on br-int \(made by ovn-psample watch \(pid \d+\)\)"/);
    expect(output).toMatch(/"msg":"summary: \d+ samples received/);
    expect(collectorSets()).toBe('');

    // The records of every interval the test spanned (intervals end on whole minutes; SIGTERM writes the last).
    const records = output
      .split('\n')
      .filter((line) => line.startsWith('{"version":1,"type":'))
      .map((line) => JSON.parse(line) as FlowRecord);
    const flows = records.filter((record) => record.type === 'flow');
    const intervals = records.filter((record) => record.type === 'interval');
    expect(intervals.length).toBeGreaterThan(0);
    for (const field of ['sampledPackets', 'samples', 'packets'] as const)
      expect(intervals.reduce((n, interval) => n + interval[field], 0)).toBe(flows.reduce((n, flow) => n + flow[field], 0));
    const requests = (from: string, to: string): FlowRecord[] =>
      flows.filter((flow) => flow.src.ip === podOf(node, from).ip && flow.dst.ip === podOf(node, to).ip && flow.icmpType === 8);
    const sampled = (list: FlowRecord[]): number => list.reduce((n, flow) => n + flow.sampledPackets, 0);
    const frontend = { kind: 'pod', namespace: 'shop', name: 'frontend', ip: podOf(node, 'shop_frontend').ip };

    const allowed = requests('shop_frontend', 'shop_backend');
    expect(sampled(allowed)).toBeGreaterThanOrEqual(3);
    for (const flow of allowed)
      expect(flow).toMatchObject({
        verdict: 'allow',
        message: 'Allowed by network policy allow-frontend in namespace shop',
        src: frontend,
        dst: { kind: 'pod', namespace: 'shop', name: 'backend' },
        protocol: 1,
      });
    const isolated = requests('shop_frontend', 'shop_db');
    expect(sampled(isolated)).toBe(2);
    for (const flow of isolated)
      expect(flow).toMatchObject({
        verdict: 'drop',
        message: 'Dropped by network policies isolation in namespace shop',
        dst: { kind: 'pod', namespace: 'shop', name: 'db' },
        chain: [expect.objectContaining({ verdict: 'drop', policy: 'isolation:shop' })],
      });
    const passed = requests('tenant-b_client', 'shop_backend');
    expect(sampled(passed)).toBe(1);
    expect(passed[0]).toMatchObject({
      verdict: 'drop',
      message: 'Delegated by admin network policy pass-monitoring → Dropped by network policies isolation in namespace shop',
      src: { kind: 'pod', namespace: 'tenant-b', name: 'client' },
      chain: [expect.objectContaining({ policy: 'anp:pass-monitoring' }), expect.objectContaining({ policy: 'isolation:shop' })],
    });
    const egress = requests('shop_frontend', 'ext_host');
    expect(sampled(egress)).toBe(1);
    expect(egress[0]).toMatchObject({
      verdict: 'drop',
      message: 'Dropped by egress firewall in namespace shop',
      dst: { kind: 'external', ip: podOf(node, 'ext_host').ip },
    });
    // OVS samples at probability 1: every sampled packet stands for itself.
    for (const flow of flows) expect(flow.packets).toBe(flow.sampledPackets);
  }, 900_000);

  it("a watch the kernel kills (SIGKILL, as the OOM killer does) leaves its set; the next pod's watch, in the node's pid namespace as the template has it (hostPID), finds no process of that pid left, takes the set over and removes it when the pod stops", async () => {
    await podman('pod', 'rm', '--force', '--time', '0', POD).catch(() => undefined);
    expect(collectorSets()).toBe('');
    expect(pod.spec.hostPID).toBe(true);
    /** The owner the set records: its pid and pid namespace. */
    const owner = (): { pid: string | undefined; pidNamespace: string | undefined } => {
      const text = collectorSets();
      return { pid: /ovn-psample-pid="?(\d+)"?/.exec(text)?.[1], pidNamespace: /ovn-psample-pidns="?(\d+)"?/.exec(text)?.[1] };
    };
    const nodePidNamespace = /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))![1];

    await podman('kube', 'play', file);
    await ready();
    const made = collectorSets();
    expect(made).toMatch(madeByUs());
    const dead = owner();
    const pid = await containerPid();
    // The set names the watch as the node sees it.
    expect(dead).toEqual({ pid: String(pid), pidNamespace: nodePidNamespace });
    process.kill(pid, 'SIGKILL');
    // Gone with the pod: nothing of it may answer for the set any more, and nothing removed it.
    await podman('pod', 'rm', '--force', '--time', '0', POD);
    expect(collectorSets()).toBe(made);

    await podman('kube', 'play', file);
    await ready();
    expect(await logs()).toMatch(
      new RegExp(
        `"msg":"took over Flow_Sample_Collector_Set ${node.collectorSetId} on br-int, psample group ${node.psampleGroup}, from a watch that is gone \\(no process ${dead.pid} is left\\); it is removed at exit"`,
      ),
    );
    const next = await containerPid();
    expect(owner()).toEqual({ pid: String(next), pidNamespace: nodePidNamespace });
    await podman('pod', 'stop', '--time', '30', POD);
    expect(Number((await podman('wait', pod.containerName)).trim())).toBe(0);
    expect(collectorSets()).toBe('');
  }, 900_000);
});
