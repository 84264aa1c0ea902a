import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureCollectorSet, exportIpfix, podOf, startOvnkNode, type OvnkNode } from '../support/lab/ovnk-node';
import { run, settle, traffic } from '../support/lab/shell';
import { ipfixSummary, LISTENING_IPFIX, LISTENING_PSAMPLE, startWatch, watchEvents, withoutSource } from '../support/lab/watch';

// On the ovn-kubernetes-shaped node (support/ovnk-node.sh: OVS 3.5, OVN 25.03, kernel 6.12),
// collector set 42 sends every OVN sample to psample group 42 and, through an IPFIX row, to
// ovn-psample's IPFIX socket: a psample watch and an IPFIX watch run side by side, and for the
// demo's traffic (allow, isolation drop, the ANP pass chain, the egress firewall) they must print
// the same events: the same packets, verdicts, chains (each step's cookie and OVN event), pods and
// datapaths. What only one source has (packet bytes, the psample group and ifindex; the
// exporter and the weight) is left out of the comparison. Then a watch forced to IPFIX on this
// psample-capable node attaches its own IPFIX row to the set and, stopped, removes only that.

const IPFIX_TARGET = '127.0.0.1:4740';
/** Where the forced watch listens: not the target of the row this file made. */
const FORCED_TARGET = '127.0.0.1:4741';

/** The set's columns that say what it is and where its psample samples go, as ovs-vsctl prints them. */
function setWithoutIpfix(node: OvnkNode): string {
  return run('ovs-vsctl', [
    '--columns=_uuid,id,bridge,local_group_id,external_ids',
    'find',
    'Flow_Sample_Collector_Set',
    `id=${node.collectorSetId}`,
  ]);
}

/** The set's IPFIX row: its uuid, targets and external_ids (empty when the set exports none). */
function ipfixOfSet(node: OvnkNode): { uuid: string; targets: string; externalIds: string } | undefined {
  const uuid = run('ovs-vsctl', ['--bare', '--columns=ipfix', 'find', 'Flow_Sample_Collector_Set', `id=${node.collectorSetId}`]).trim();
  if (uuid === '') return undefined;
  const get = (column: string): string => run('ovs-vsctl', ['get', 'IPFIX', uuid, column]).trim();
  return { uuid, targets: get('targets'), externalIds: get('external_ids') };
}

const ipfixRowCount = (): number => run('ovs-vsctl', ['--bare', '--columns=_uuid', 'list', 'IPFIX']).split(/\s+/).filter(Boolean).length;

describe('watch --source ipfix on the ovn-kubernetes-shaped node (real OVS 3.5 exporting IPFIX beside psample)', () => {
  let node: OvnkNode;
  let setUuid = '';
  let madeSet = false;

  const ping = async (from: string, to: string, count: number): Promise<void> => {
    await traffic(from, 'ping', ['-c', String(count), '-i', '0.5', '-W', '1', podOf(node, to).ip]);
  };

  beforeAll(() => {
    node = startOvnkNode();
    madeSet = ensureCollectorSet(node);
    // As OVN's system tests set IPFIX up: the set keeps its psample group and exports IPFIX too.
    setUuid = exportIpfix(node, IPFIX_TARGET);
  });

  afterAll(() => {
    if (setUuid === '') return;
    if (madeSet) run('ovs-vsctl', ['destroy', 'Flow_Sample_Collector_Set', setUuid]);
    else run('ovs-vsctl', ['clear', 'Flow_Sample_Collector_Set', setUuid, 'ipfix']);
  });

  it('allow, isolation drop, the ANP pass chain and the egress firewall: the same events from psample and from IPFIX', async () => {
    const psample = await startWatch([], LISTENING_PSAMPLE);
    const ipfix = await startWatch(['--source', 'ipfix', '--ipfix-listen', IPFIX_TARGET], LISTENING_IPFIX);
    await ping('shop_frontend', 'shop_backend', 2);
    await ping('shop_frontend', 'shop_db', 1);
    await ping('tenant-b_client', 'shop_backend', 1);
    await ping('shop_frontend', 'ext_host', 1);
    await settle(2000);
    psample.child.kill('SIGINT');
    ipfix.child.kill('SIGINT');
    expect(await psample.exited).toBe(0);
    expect(await ipfix.exited).toBe(0);

    const fromPsample = watchEvents(psample);
    const fromIpfix = watchEvents(ipfix);
    for (const event of fromIpfix) console.log(`PROOF ipfix ${JSON.stringify(event)}`);
    for (const event of fromPsample) console.log(`PROOF psample ${JSON.stringify(withoutSource(event))}`);
    // The demo's cases are there, with their chains (watch.lab.test.ts checks them in detail).
    const messages = fromIpfix.map((event) => event.message);
    expect(messages).toContain('Allowed by network policy allow-frontend in namespace shop');
    expect(messages).toContain('Dropped by network policies isolation in namespace shop');
    expect(messages).toContain(
      'Delegated by admin network policy pass-monitoring → Dropped by network policies isolation in namespace shop',
    );
    expect(messages).toContain('Dropped by egress firewall in namespace shop');
    expect(fromIpfix.every((event) => event.source === 'ipfix' && event.weight === 1 && event.packet === undefined)).toBe(true);
    // Packet for packet, the same event.
    expect(fromIpfix.map(withoutSource)).toEqual(fromPsample.map(withoutSource));
    // The same ingress port, named by OVS in the record and by its ifindex for psample.
    expect(fromIpfix.map((event) => event.interface)).toEqual(fromPsample.map((event) => event.interface));
    expect(ipfixSummary(ipfix)).toMatch(/lost 0 by the exporters' sequence numbers/);
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    '--source ipfix --force-ipfix --add-ovs-collector on this psample node: its own IPFIX row on set 42, the traffic decoded from it, only that row removed at %s',
    async (signal) => {
      // The set exports nowhere but to psample, as on a node where only ovn-kubernetes set it up.
      run('ovs-vsctl', ['clear', 'Flow_Sample_Collector_Set', setUuid, 'ipfix']);
      const before = setWithoutIpfix(node);
      expect(ipfixRowCount()).toBe(0);

      const watch = await startWatch(
        ['--source', 'ipfix', '--force-ipfix', '--add-ovs-collector', '--ipfix-listen', FORCED_TARGET],
        LISTENING_IPFIX,
      );
      const row = ipfixOfSet(node);
      console.log(`PROOF ${signal} row while watching ${JSON.stringify(row)}`);
      expect(row?.targets).toBe(`["${FORCED_TARGET}"]`);
      // ovs-vsctl quotes what is not a bare word: the pid, maybe the keys.
      expect(row?.externalIds).toMatch(/\bowner="?ovn-psample"?/);
      expect(row?.externalIds).toMatch(new RegExp(`"?ovn-psample-pid"?="${watch.child.pid}"`));
      // psample's export is the set's as before: the watch attached IPFIX to it and changed nothing else.
      expect(setWithoutIpfix(node)).toBe(before);
      expect(watch.stderr()).toMatch(/--force-ipfix: ovs-vswitchd found the psample action/);

      await ping('shop_frontend', 'shop_backend', 1);
      await ping('shop_frontend', 'shop_db', 1);
      await settle(2000);
      watch.child.kill(signal);
      expect(await watch.exited).toBe(0);

      const events = watchEvents(watch);
      for (const event of events) console.log(`PROOF ${signal} ${JSON.stringify(event)}`);
      const messages = events.map((event) => event.message);
      expect(messages).toContain('Allowed by network policy allow-frontend in namespace shop');
      expect(messages).toContain('Dropped by network policies isolation in namespace shop');
      expect(events.every((event) => event.source === 'ipfix' && event.exporter !== undefined)).toBe(true);
      expect(ipfixSummary(watch)).toMatch(/lost 0 by the exporters' sequence numbers/);

      // Its row is gone; the set, its psample group and its owner's marks are as they were.
      expect(ipfixOfSet(node)).toBeUndefined();
      expect(ipfixRowCount()).toBe(0);
      expect(setWithoutIpfix(node)).toBe(before);
    },
  );

  it("a SIGKILLed forced watch's row, taken over by the next watch after the set's templates went to the dead one: decoded within the row's 10 s template interval", async () => {
    run('ovs-vsctl', ['clear', 'Flow_Sample_Collector_Set', setUuid, 'ipfix']);
    const args = ['--source', 'ipfix', '--force-ipfix', '--add-ovs-collector', '--ipfix-listen', FORCED_TARGET];
    const first = await startWatch(args, LISTENING_IPFIX);
    const row = ipfixOfSet(node)!;
    expect(run('ovs-vsctl', ['get', 'IPFIX', row.uuid, 'template_interval']).trim()).toBe('10');
    // The first watch hears the allow, with the domain's templates: OVS's template clock for it starts now.
    await ping('shop_frontend', 'shop_backend', 1);
    await settle(1000);
    expect(watchEvents(first).map((event) => event.message)).toContain('Allowed by network policy allow-frontend in namespace shop');
    first.child.kill('SIGKILL');
    await first.exited;
    // Records of that domain go to the dead socket meanwhile; OVS keeps the clock.
    await ping('shop_frontend', 'shop_backend', 1);

    const second = await startWatch(args, LISTENING_IPFIX);
    expect(second.stderr()).toMatch(
      /took over the IPFIX export of Flow_Sample_Collector_Set \d+ on br-int to 127\.0\.0\.1:4741 from a watch that is gone/,
    );
    expect(ipfixOfSet(node)?.uuid).toBe(row.uuid);
    const started = Date.now();
    let decoded = false;
    // OVS's default (600 s) would leave it without templates for ten minutes.
    while (!decoded && Date.now() - started < 25_000) {
      await ping('shop_frontend', 'shop_backend', 1);
      await settle(1000);
      decoded = watchEvents(second).some((event) => event.message === 'Allowed by network policy allow-frontend in namespace shop');
    }
    console.log(`PROOF takeover decoded after ${Date.now() - started} ms`);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    expect(decoded).toBe(true);
    expect(ipfixOfSet(node)).toBeUndefined();
    expect(ipfixRowCount()).toBe(0);
  });
});
