import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeOvsCookie, OvnSampleDecoder, splitOvnObsDomain, type OvnSampleEvent, type PsampleMessage } from '../../src/index';
import { flowPointId } from '../../src/ovn/cookie';
import { ensureCollectorSet, podOf, startOvnkNode, type OvnkNode } from '../support/lab/ovnk-node';
import { collectSamples } from '../support/lab/samples';
import { run, settle, traffic } from '../support/lab/shell';
import { openPsampleForEachTest } from '../support/lab/sockets';

// OVN 25.03's drop sampling through the real ovn-northd and ovn-controller, on the
// ovn-kubernetes-shaped node (support/ovnk-node.sh), with NB_Global
// options:debug_drop_collector_set pointing at the node's collector set (psample group 42).
// ovn-northd samples its drop flows with the Sampling_App of type drop (id 1 on this node);
// ovn-controller samples the drops of its own OpenFlow tables with SB_Global
// options:debug_drop_domain_id, set here to 5 so that the two domains differ as they may on a
// real node. Each case makes one kind of drop happen and asserts the cookies the kernel hands
// out and what the decoder, following the node's databases live, makes of them.

const CONTROLLER_DOMAIN = 5;
const FRONTEND = 'shop_frontend';
/** A port plugged into br-int that no logical port claims, as a leftover veth would be. */
const STRAY = 'stray';

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

const same = (a: Triple, b: Triple): boolean => a.appId === b.appId && a.datapathKey === b.datapathKey && a.pointId === b.pointId;

/** The node's one logical flow of ls_in_l2_unknown that drops frames no port's MAC matches. */
function l2UnknownDropFlow(): { uuid: string; table: number; source: string } {
  const found = run('ovn-sbctl', [
    '--bare',
    '--columns=_uuid,table_id,external_ids',
    'find',
    'Logical_Flow',
    'external_ids:stage-name=ls_in_l2_unknown',
    'priority=50',
  ])
    .trim()
    .split(/\n\s*\n/)
    .map((record) => record.split('\n'));
  expect(found, 'ls_in_l2_unknown priority 50 flows').toHaveLength(1);
  const [uuid, table, ids] = found[0]!;
  return { uuid: uuid!.trim(), table: Number(table), source: /source=([^\s,]+)/.exec(ids!)![1]! };
}

describe("OVN drop sampling through real ovn-northd and ovn-controller (OVN 25.03): ovn-controller's tables and northd's drop flows decoded", () => {
  const open = openPsampleForEachTest();
  let node: OvnkNode;
  let decoder: OvnSampleDecoder;
  let madeCollectorSet = false;

  /** Pings from `netns`, and returns the samples that came with it once `expected` is among them. */
  async function dropped(netns: string, target: string, expected: Triple): Promise<PsampleMessage[]> {
    const socket = open({ groups: [node.psampleGroup] });
    const seen: PsampleMessage[] = [];
    socket.on('sample', (sample: PsampleMessage) => seen.push(sample));
    const pending = collectSamples(
      socket,
      (samples) => samples.some((sample) => same(tripleOf(sample), expected)),
      `a drop sample ${JSON.stringify(expected)}`,
    );
    await traffic(netns, 'ping', ['-c', '2', '-i', '0.3', '-W', '1', target]);
    await pending;
    await settle(300);
    return seen;
  }

  /** Every sample of drop sampling names what dropped it: nothing stale, nothing unknown. */
  function expectAllDecoded(samples: readonly PsampleMessage[]): OvnSampleEvent[] {
    const events = samples.map((sample) => decoder.decodeSample(sample));
    const undecoded = events.filter((event) => event.status !== 'decoded').map((event) => `${event.status}: ${event.message}`);
    expect(undecoded).toEqual([]);
    return events;
  }

  beforeAll(async () => {
    node = startOvnkNode();
    // ovn-controller samples its drops only into a collector set that exists on br-int.
    madeCollectorSet = ensureCollectorSet(node);
    run('ovn-nbctl', [
      'set',
      'NB_Global',
      '.',
      `options:debug_drop_collector_set=${node.collectorSetId}`,
      `options:debug_drop_domain_id=${CONTROLLER_DOMAIN}`,
    ]);
    run('ovn-nbctl', ['--timeout=120', '--wait=hv', 'sync']);
    decoder = new OvnSampleDecoder({ nb: node.northbound, sb: node.southbound });
    await decoder.start();
  });

  afterAll(async () => {
    await decoder?.close();
    // Leave the node as ovnk-node.sh built it, for the files that run after this one.
    run('ovn-nbctl', ['remove', 'NB_Global', '.', 'options', 'debug_drop_collector_set', 'debug_drop_domain_id']);
    if (run('ovn-nbctl', ['--bare', '--columns=_uuid', 'find', 'Sampling_App', 'type=drop']).trim() === '') {
      run('ovn-nbctl', ['create', 'Sampling_App', 'type=drop', `id=${node.apps.drop}`]);
    }
    run('ip', ['-n', FRONTEND, 'neigh', 'flush', 'nud', 'permanent']);
    run('ovs-vsctl', ['--if-exists', 'del-port', 'br-int', `v${STRAY}`]);
    run('ip', ['netns', 'del', STRAY]);
    if (madeCollectorSet) {
      for (const uuid of run('ovs-vsctl', ['--bare', '--columns=_uuid', 'find', 'Flow_Sample_Collector_Set', `id=${node.collectorSetId}`])
        .split(/\s+/)
        .filter(Boolean)) {
        run('ovs-vsctl', ['destroy', 'Flow_Sample_Collector_Set', uuid]);
      }
    }
    run('ovn-nbctl', ['--timeout=120', '--wait=hv', 'sync']);
  });

  it('a frame sent back out of the port it came in on: ovn-controller drops it in table 44, OFTABLE_CHECK_LOOPBACK', async () => {
    const frontend = podOf(node, FRONTEND);
    // The frontend's own MAC for another address: the switch sends the frame to the port it came from.
    run('ip', ['-n', FRONTEND, 'neigh', 'replace', '10.244.0.77', 'lladdr', frontend.mac, 'dev', 'eth0', 'nud', 'permanent']);
    const expected = { appId: CONTROLLER_DOMAIN, datapathKey: 0, pointId: 44 };
    const samples = await dropped(FRONTEND, '10.244.0.77', expected);
    expectAllDecoded(samples);
    const loopback = samples.find((sample) => same(tripleOf(sample), expected))!;
    expect(loopback).toMatchObject({ group: node.psampleGroup, probability: true });
    expect(decoder.decodeSample(loopback)).toMatchObject({
      status: 'decoded',
      app: 'drop',
      action: 'drop',
      message:
        'Dropped by ovn-controller in OpenFlow table 44 (OFTABLE_CHECK_LOOPBACK: it would leave through the logical port it came in on (or from a localport through a localnet port))',
      openflowTable: { table: 44, release: '25.03', name: 'OFTABLE_CHECK_LOOPBACK' },
      datapath: { key: 0 },
    });
  });

  it('a frame from a port no logical port is bound to: ovn-controller drops it in table 0, OFTABLE_PHY_TO_LOG', async () => {
    run('ip', ['netns', 'add', STRAY]);
    run('ip', ['link', 'add', `v${STRAY}`, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', STRAY]);
    run('ip', ['-n', STRAY, 'addr', 'add', '10.244.0.99/24', 'dev', 'eth0']);
    run('ip', ['-n', STRAY, 'link', 'set', 'eth0', 'up']);
    run('ip', ['link', 'set', `v${STRAY}`, 'up']);
    run('ovs-vsctl', ['add-port', 'br-int', `v${STRAY}`]);
    const expected = { appId: CONTROLLER_DOMAIN, datapathKey: 0, pointId: 0 };
    const samples = await dropped(STRAY, '10.244.0.3', expected);
    expectAllDecoded(samples);
    expect(decoder.decodeSample(samples.find((sample) => same(tripleOf(sample), expected))!)).toMatchObject({
      status: 'decoded',
      app: 'drop',
      openflowTable: { table: 0, release: '25.03', name: 'OFTABLE_PHY_TO_LOG' },
      datapath: { key: 0 },
    });
  });

  it("a frame to a MAC no port has: northd's ls_in_l2_unknown flow drops it, sampled with the drop app's domain", async () => {
    run('ip', ['-n', FRONTEND, 'neigh', 'replace', '10.244.0.88', 'lladdr', '0a:58:0a:f4:00:88', 'dev', 'eth0', 'nud', 'permanent']);
    const flow = l2UnknownDropFlow();
    const expected = { appId: node.apps.drop, datapathKey: node.datapathKey, pointId: flowPointId(flow.uuid) };
    const samples = await dropped(FRONTEND, '10.244.0.88', expected);
    expectAllDecoded(samples);
    const event = await decoder.decodeWithDetails(((expected.appId << 24) | expected.datapathKey) >>> 0, expected.pointId);
    expect(event).toMatchObject({
      status: 'decoded',
      app: 'drop',
      action: 'drop',
      message: `Dropped by OVN logical flow in stage ls_in_l2_unknown (${flow.source}): No L2 destination`,
      datapath: { key: node.datapathKey, switch: node.node, network: 'default' },
      flow: {
        uuid: flow.uuid,
        stage: 'ls_in_l2_unknown',
        source: flow.source,
        pipeline: 'ingress',
        table: flow.table,
        priority: 50,
        match: 'outport == "none"',
        description: 'No L2 destination',
      },
    });
    expect(flow.source).toMatch(/^northd\.c:\d+$/);
    expect(event.flow?.actions).toContain(`obs_domain=${node.apps.drop}`);
  });

  it('without a Sampling_App of type drop, northd samples its drop flows with debug_drop_domain_id: decoded alike', async () => {
    run('ovn-nbctl', [
      'destroy',
      'Sampling_App',
      run('ovn-nbctl', ['--bare', '--columns=_uuid', 'find', 'Sampling_App', 'type=drop']).trim(),
    ]);
    run('ovn-nbctl', ['--timeout=120', '--wait=hv', 'sync']);
    const flow = l2UnknownDropFlow();
    const expected = { appId: CONTROLLER_DOMAIN, datapathKey: node.datapathKey, pointId: flowPointId(flow.uuid) };
    const samples = await dropped(FRONTEND, '10.244.0.88', expected);
    expectAllDecoded(samples);
    expect(decoder.decodeSample(samples.find((sample) => same(tripleOf(sample), expected))!)).toMatchObject({
      status: 'decoded',
      app: 'drop',
      flow: { uuid: flow.uuid, stage: 'ls_in_l2_unknown', pipeline: 'ingress', table: flow.table },
      datapath: { key: node.datapathKey, switch: node.node },
    });
  });
});
