import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIpfix, OvnSampleDecoder, type IpfixSample, type OvnSampleEvent, type PsampleMessage } from '../../src/index';
import { flowPointId } from '../../src/ovn/cookie';
import { ensureCollectorSet, exportIpfix, podOf, startOvnkNode, type OvnkNode } from '../support/lab/ovnk-node';
import { collectSamples, tripleOf, tripleOfRecord, type Triple } from '../support/lab/samples';
import { run, settle, traffic } from '../support/lab/shell';
import { openPsampleForEachTest } from '../support/lab/sockets';
import { ipfixSummary, LISTENING_IPFIX, LISTENING_PSAMPLE, startWatch, watchEvents, withoutSource } from '../support/lab/watch';

// OVN 25.03's drop sampling through the real ovn-northd and ovn-controller, on the
// ovn-kubernetes-shaped node (support/ovnk-node.sh), with NB_Global
// options:debug_drop_collector_set pointing at the node's collector set (psample group 42).
// ovn-northd samples its drop flows with the Sampling_App of type drop (id 1 on this node);
// ovn-controller samples the drops of its own OpenFlow tables with SB_Global
// options:debug_drop_domain_id, set here to 5 so that the two domains differ as they may on a
// real node. Each case makes one kind of drop happen and asserts the cookies the kernel hands
// out and what the decoder, following the node's databases live, makes of them. The set also
// exports IPFIX (as OVN's system tests set it up): each drop's IPFIX record carries the same
// cookie and decodes to the same event as its psample sample, and `watch --source ipfix` prints
// the same events for these drops as the psample watch.

const CONTROLLER_DOMAIN = 5;
const FRONTEND = 'shop_frontend';
/** A port plugged into br-int that no logical port claims, as a leftover veth would be. */
const STRAY = 'stray';
const IPFIX_PORT = 4742;
const IPFIX_TARGET = `127.0.0.1:${IPFIX_PORT}`;
/** Frames to it carry the frontend's own MAC: sent back to the port they came in on (table 44). */
const LOOPBACK_ADDRESS = '10.244.0.77';
/** Frames to it carry a MAC no port has: northd's ls_in_l2_unknown drop. */
const UNKNOWN_MAC_ADDRESS = '10.244.0.88';
const UNKNOWN_MAC = '0a:58:0a:f4:00:88';

const same = (a: Triple, b: Triple): boolean => a.appId === b.appId && a.datapathKey === b.datapathKey && a.pointId === b.pointId;

/** What each drop left: the psample samples and the IPFIX records of the same packets. */
interface Drops {
  samples: PsampleMessage[];
  records: IpfixSample[];
}

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
  let setUuid = '';

  /** Pings from `netns`, and returns the samples and records that came with it once `expected` is among both. */
  async function dropped(netns: string, target: string, expected: Triple): Promise<Drops> {
    const socket = open({ groups: [node.psampleGroup] });
    const ipfix = await openIpfix({ port: IPFIX_PORT });
    try {
      const samples: PsampleMessage[] = [];
      const records: IpfixSample[] = [];
      socket.on('sample', (sample: PsampleMessage) => samples.push(sample));
      ipfix.on('sample', (record) => records.push(record));
      const sampled = collectSamples(
        socket,
        (seen) => seen.some((sample) => same(tripleOf(sample), expected)),
        `a drop sample ${JSON.stringify(expected)}`,
      );
      const exported = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no IPFIX record ${JSON.stringify(expected)} within 30 s`)), 30_000);
        ipfix.on('sample', (record) => {
          if (!same(tripleOfRecord(record), expected)) return;
          clearTimeout(timer);
          resolve();
        });
      });
      await traffic(netns, 'ping', ['-c', '2', '-i', '0.3', '-W', '1', target]);
      await Promise.all([sampled, exported]);
      await settle(300);
      return { samples, records };
    } finally {
      await ipfix[Symbol.asyncDispose]();
    }
  }

  /**
   * The packet's IPFIX record and its psample sample carry the same cookie and decode to the same
   * event, and every record decodes as every sample does: nothing stale, nothing unknown.
   */
  function expectIpfixAlike(drops: Drops, expected: Triple): OvnSampleEvent {
    const undecoded = drops.records
      .map((record) => decoder.decode(record.observationDomainId, record.observationPointId ?? 0))
      .filter((event) => event.status !== 'decoded')
      .map((event) => `${event.status}: ${event.message}`);
    expect(undecoded).toEqual([]);
    const record = drops.records.find((candidate) => same(tripleOfRecord(candidate), expected))!;
    const sample = drops.samples.find((candidate) => same(tripleOf(candidate), expected))!;
    const fromIpfix = decoder.decode(record.observationDomainId, record.observationPointId!);
    console.log(`PROOF ipfix record ${JSON.stringify({ ...record, exporter: undefined })} -> ${fromIpfix.message}`);
    expect(fromIpfix).toEqual(decoder.decodeSample(sample));
    expect(record.weight).toBe(1);
    return fromIpfix;
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
    // Each case opens its own collector after earlier cases (and the node's own traffic) were heard
    // in ovn-controller's drop domain: templates every second reach each of them.
    setUuid = exportIpfix(node, IPFIX_TARGET, { templateIntervalS: 1 });
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
    if (!madeCollectorSet && setUuid !== '') run('ovs-vsctl', ['clear', 'Flow_Sample_Collector_Set', setUuid, 'ipfix']);
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
    run('ip', ['-n', FRONTEND, 'neigh', 'replace', LOOPBACK_ADDRESS, 'lladdr', frontend.mac, 'dev', 'eth0', 'nud', 'permanent']);
    const expected = { appId: CONTROLLER_DOMAIN, datapathKey: 0, pointId: 44 };
    const drops = await dropped(FRONTEND, LOOPBACK_ADDRESS, expected);
    const samples = drops.samples;
    expectAllDecoded(samples);
    expectIpfixAlike(drops, expected);
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
    const drops = await dropped(STRAY, '10.244.0.3', expected);
    const samples = drops.samples;
    expectAllDecoded(samples);
    expectIpfixAlike(drops, expected);
    expect(decoder.decodeSample(samples.find((sample) => same(tripleOf(sample), expected))!)).toMatchObject({
      status: 'decoded',
      app: 'drop',
      openflowTable: { table: 0, release: '25.03', name: 'OFTABLE_PHY_TO_LOG' },
      datapath: { key: 0 },
    });
  });

  it("a frame to a MAC no port has: northd's ls_in_l2_unknown flow drops it, sampled with the drop app's domain", async () => {
    run('ip', ['-n', FRONTEND, 'neigh', 'replace', UNKNOWN_MAC_ADDRESS, 'lladdr', UNKNOWN_MAC, 'dev', 'eth0', 'nud', 'permanent']);
    const flow = l2UnknownDropFlow();
    const expected = { appId: node.apps.drop, datapathKey: node.datapathKey, pointId: flowPointId(flow.uuid) };
    const drops = await dropped(FRONTEND, UNKNOWN_MAC_ADDRESS, expected);
    expectAllDecoded(drops.samples);
    expectIpfixAlike(drops, expected);
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

  it("watch --source ipfix prints the same events as the psample watch for ovn-controller's table 44 drop and northd's ls_in_l2_unknown drop", async () => {
    const frontend = podOf(node, FRONTEND);
    run('ip', ['-n', FRONTEND, 'neigh', 'replace', LOOPBACK_ADDRESS, 'lladdr', frontend.mac, 'dev', 'eth0', 'nud', 'permanent']);
    run('ip', ['-n', FRONTEND, 'neigh', 'replace', UNKNOWN_MAC_ADDRESS, 'lladdr', UNKNOWN_MAC, 'dev', 'eth0', 'nud', 'permanent']);
    const psample = await startWatch([], LISTENING_PSAMPLE);
    const ipfix = await startWatch(['--source', 'ipfix', '--ipfix-listen', IPFIX_TARGET], LISTENING_IPFIX);
    // The set repeats its templates every second: wait for them to reach the IPFIX watch.
    await settle(1500);
    await traffic(FRONTEND, 'ping', ['-c', '1', '-W', '1', LOOPBACK_ADDRESS]);
    await traffic(FRONTEND, 'ping', ['-c', '1', '-W', '1', UNKNOWN_MAC_ADDRESS]);
    await settle(2000);
    psample.child.kill('SIGINT');
    ipfix.child.kill('SIGINT');
    expect(await psample.exited).toBe(0);
    expect(await ipfix.exited).toBe(0);
    // The frontend's pings: the stray port left by the table 0 case may be heard too.
    const pings = (events: Record<string, unknown>[]): Record<string, unknown>[] =>
      events.filter((event) => [LOOPBACK_ADDRESS, UNKNOWN_MAC_ADDRESS].includes((event.dst as { ip?: string } | undefined)?.ip ?? ''));
    const fromPsample = pings(watchEvents(psample));
    const fromIpfix = pings(watchEvents(ipfix));
    for (const event of fromIpfix) console.log(`PROOF ipfix ${JSON.stringify(event)}`);
    for (const event of fromPsample) console.log(`PROOF psample ${JSON.stringify(withoutSource(event))}`);
    const messages = fromIpfix.map((event) => event.message);
    expect(messages).toContain(
      'Dropped by ovn-controller in OpenFlow table 44 (OFTABLE_CHECK_LOOPBACK: it would leave through the logical port it came in on (or from a localport through a localnet port))',
    );
    expect(
      messages.some((message) =>
        /^Dropped by OVN logical flow in stage ls_in_l2_unknown \(northd\.c:\d+\): No L2 destination$/.test(String(message)),
      ),
    ).toBe(true);
    expect(fromIpfix.every((event) => event.source === 'ipfix' && event.weight === 1)).toBe(true);
    expect(fromIpfix.map(withoutSource)).toEqual(fromPsample.map(withoutSource));
    expect(ipfixSummary(ipfix)).toMatch(/lost 0 by the exporters' sequence numbers/);
    expect(JSON.stringify(fromIpfix)).not.toMatch(/no longer exists|"status":"(stale|unknown)"/);
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
    const drops = await dropped(FRONTEND, UNKNOWN_MAC_ADDRESS, expected);
    const samples = drops.samples;
    expectAllDecoded(samples);
    expectIpfixAlike(drops, expected);
    expect(decoder.decodeSample(samples.find((sample) => same(tripleOf(sample), expected))!)).toMatchObject({
      status: 'decoded',
      app: 'drop',
      flow: { uuid: flow.uuid, stage: 'ls_in_l2_unknown', pipeline: 'ingress', table: flow.table },
      datapath: { key: node.datapathKey, switch: node.node },
    });
  });
});
