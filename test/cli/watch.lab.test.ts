import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonLines } from '../support/cli';
import { ensureCollectorSet, podOf, startOvnkNode, type OvnkNode } from '../support/lab/ovnk-node';
import { run, settle, traffic } from '../support/lab/shell';
import { LISTENING_PSAMPLE, startWatch } from '../support/lab/watch';

// `ovn-psample watch --add-ovs-collector` on the ovn-kubernetes-shaped node
// (support/ovnk-node.sh) with no collector set configured beforehand: it must
// make the set, print one verdict line per packet with pod names for the
// allow, isolation-drop, ANP-pass chain and egress-firewall cases, and remove
// its set at exit.

interface Step {
  verdict: string;
  text: string;
  policy: string;
}

interface WatchEvent {
  verdict: string;
  message: string;
  src: { kind: string; namespace?: string; name?: string; ip: string };
  dst: { kind: string; namespace?: string; name?: string; ip: string };
  chain: Step[];
  samples: number;
}

function collectorSets(): string {
  return run('ovs-vsctl', ['--bare', '--columns=id,local_group_id,external_ids', 'list', 'Flow_Sample_Collector_Set']).trim();
}

describe('ovn-psample watch on an ovn-kubernetes-shaped node (real OVS 3.5, OVN 25.03, kernel 6.12)', () => {
  let node: OvnkNode;

  beforeAll(() => {
    node = startOvnkNode();
    // A node before anyone set observability up: no collector set (ovn-acl's may still be there).
    for (const uuid of run('ovs-vsctl', ['--bare', '--columns=_uuid', 'find', 'Flow_Sample_Collector_Set', `id=${node.collectorSetId}`])
      .split(/\s+/)
      .filter(Boolean)) {
      run('ovs-vsctl', ['destroy', 'Flow_Sample_Collector_Set', uuid]);
    }
  });

  afterAll(() => {
    // Leave the node as ovnk-node.sh built it, for the files that run after this one.
    ensureCollectorSet(node);
  });

  it('--add-ovs-collector: verdict lines with pod names for allow, isolation drop, the ANP pass chain and the egress firewall; the set is removed at exit', async () => {
    expect(collectorSets()).toBe('');
    const watch = await startWatch(['--add-ovs-collector'], LISTENING_PSAMPLE);
    expect(collectorSets()).toMatch(new RegExp(`^${node.collectorSetId}\\s+${42}\\s+.*owner=ovn-psample`, 's'));

    const ping = async (from: string, to: string, count: number): Promise<void> => {
      await traffic(from, 'ping', ['-c', String(count), '-i', '0.3', '-W', '1', podOf(node, to).ip]);
    };
    await ping('shop_frontend', 'shop_backend', 3);
    await ping('shop_frontend', 'shop_db', 1);
    await ping('tenant-b_client', 'shop_backend', 1);
    await ping('shop_frontend', 'ext_host', 1);
    await settle(1500);
    expect(await watch.stop('SIGINT')).toBe(0);

    const events = jsonLines<WatchEvent>(watch.stdout());
    const between = (src: string, dst: string): WatchEvent[] =>
      events.filter((e) => e.src.ip === podOf(node, src).ip && e.dst.ip === podOf(node, dst).ip);

    const allowed = between('shop_frontend', 'shop_backend');
    expect(allowed.length).toBeGreaterThanOrEqual(3);
    expect(allowed[0]).toMatchObject({
      verdict: 'allow',
      src: { kind: 'pod', namespace: 'shop', name: 'frontend' },
      dst: { kind: 'pod', namespace: 'shop', name: 'backend' },
      message: 'Allowed by network policy allow-frontend in namespace shop',
    });

    expect(between('shop_frontend', 'shop_db')[0]).toMatchObject({
      verdict: 'drop',
      dst: { kind: 'pod', namespace: 'shop', name: 'db' },
      message: 'Dropped by network policies isolation in namespace shop',
    });

    // One packet, two samples: tier 1 passes it, tier 2 drops it; one event with the chain.
    const passed = between('tenant-b_client', 'shop_backend')[0];
    expect(passed).toMatchObject({
      verdict: 'drop',
      src: { kind: 'pod', namespace: 'tenant-b', name: 'client' },
      dst: { kind: 'pod', namespace: 'shop', name: 'backend' },
      message: 'Delegated by admin network policy pass-monitoring → Dropped by network policies isolation in namespace shop',
      samples: 2,
    });
    expect(passed!.chain.map((step) => step.policy)).toEqual(['anp:pass-monitoring', 'isolation:shop']);

    expect(between('shop_frontend', 'ext_host')[0]).toMatchObject({
      verdict: 'drop',
      src: { kind: 'pod', namespace: 'shop', name: 'frontend' },
      dst: { kind: 'external', ip: podOf(node, 'ext_host').ip },
      message: 'Dropped by egress firewall in namespace shop',
    });

    const stderr = watch.stderr();
    expect(stderr).toMatch(
      /"msg":"added Flow_Sample_Collector_Set 42 on br-int \(made by ovn-psample watch \(pid \d+\)\) with psample group 42; it is removed at exit"/,
    );
    expect(stderr).toMatch(/"msg":"removed Flow_Sample_Collector_Set 42 on br-int/);
    expect(stderr).toMatch(/"msg":"summary: \d+ samples received/);
    expect(collectorSets()).toBe('');
  });
  it('--aggregate: at SIGINT a record per flow with pods, protocol, ICMP type and verdict chain, the packets OVS sampled at probability 1, and the interval line', async () => {
    expect(collectorSets()).toBe('');
    // --format json is what --aggregate writes anyway.
    const watch = await startWatch(['--add-ovs-collector', '--aggregate', '3600'], LISTENING_PSAMPLE);
    await traffic('shop_frontend', 'ping', ['-c', '3', '-i', '0.3', '-W', '1', podOf(node, 'shop_backend').ip]);
    await traffic('shop_frontend', 'ping', ['-c', '2', '-i', '0.3', '-W', '1', podOf(node, 'shop_db').ip]);
    await settle(1500);
    // Nothing per packet: the interval is an hour.
    expect(watch.stdout()).toBe('');
    expect(await watch.stop('SIGINT')).toBe(0);

    interface FlowRecord extends Omit<WatchEvent, 'samples'> {
      type: string;
      protocol?: number;
      icmpType?: number;
      sampledPackets: number;
      samples: number;
      packets: number;
    }
    const records = jsonLines<FlowRecord>(watch.stdout());
    const flows = records.filter((record) => record.type === 'flow');
    const interval = records.at(-1)!;
    expect(interval).toMatchObject({ type: 'interval', flows: flows.length, overflow: { sampledPackets: 0 } });
    const sum = (list: FlowRecord[], field: 'sampledPackets' | 'samples' | 'packets'): number => list.reduce((n, f) => n + f[field], 0);
    for (const field of ['sampledPackets', 'samples', 'packets'] as const) expect(interval[field]).toBe(sum(flows, field));
    const requests = (dst: string): FlowRecord[] =>
      flows.filter((f) => f.src.ip === podOf(node, 'shop_frontend').ip && f.dst.ip === podOf(node, dst).ip && f.icmpType === 8);

    // The first request is sampled as a new connection's, the others as established: two chains, two flows, every request in one.
    const allowed = requests('shop_backend');
    expect(sum(allowed, 'sampledPackets')).toBeGreaterThanOrEqual(3);
    for (const flow of allowed) {
      expect(flow).toMatchObject({
        verdict: 'allow',
        src: { kind: 'pod', namespace: 'shop', name: 'frontend' },
        dst: { kind: 'pod', namespace: 'shop', name: 'backend' },
        protocol: 1,
        icmpType: 8,
        message: 'Allowed by network policy allow-frontend in namespace shop',
      });
      // OVS samples at probability 1 (0xffffffff with the flag): a sampled packet stands for itself.
      expect(flow.packets).toBe(flow.sampledPackets);
    }
    const dropped = requests('shop_db');
    expect(dropped).toEqual([
      expect.objectContaining({
        verdict: 'drop',
        dst: expect.objectContaining({ kind: 'pod', namespace: 'shop', name: 'db' }),
        message: 'Dropped by network policies isolation in namespace shop',
        sampledPackets: 2,
        packets: 2,
      }),
    ]);
    expect(watch.stderr()).toMatch(/"flowRecords":\d+/);
    expect(collectorSets()).toBe('');
  });
});
