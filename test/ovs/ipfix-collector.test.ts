// collector add --ipfix on real Open vSwitch 3.1 (Debian 12, userspace, dummy datapath: no
// psample, an OVS 3.1 schema without local_group_id): the rows it makes make ovs-vswitchd export
// to the source, and collector remove undoes exactly them. On a psample node (OVS 3.5 schema) it
// refuses unless forced.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openIpfix, type IpfixSource } from '../../src/ipfix/source';
import type { IpfixSample } from '../../src/ipfix/types';
import { addIpfixCollector, OWN_ROW_TEMPLATE_INTERVAL_S, releaseIpfixCollector } from '../../src/ovs/ipfix-collector';
import { LocalOvs } from '../../src/ovs/local-ovs';
import { OvsIpfixNotNeededError } from '../../src/ovs/errors';
import { runCli } from '../support/cli';
import { haveOvsVswitchd, OvsExporter } from '../ipfix/support/ovs-exporter';
import { startNodeOvs } from './support/ovs-database';

const PACKET =
  'in_port(1),eth(src=50:54:00:00:00:01,dst=50:54:00:00:00:02),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=6,tos=0,ttl=64,frag=no),tcp(src=40000,dst=80)';

async function until(condition: () => boolean | Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe.skipIf(!haveOvsVswitchd())('collector add --ipfix on real OVS 3.1 (no psample)', () => {
  let ovs: OvsExporter;
  let source: IpfixSource;
  const samples: IpfixSample[] = [];
  const db = (): string[] => ['--db', ovs.remote, '--bridge', 'br0'];
  const rows = async (table: string): Promise<Record<string, unknown>[]> =>
    JSON.parse(await ovs.vsctl('--format=json', '--data=json', 'list', table)).data;

  beforeAll(async () => {
    ovs = await OvsExporter.start();
    source = await openIpfix({ port: 0 });
    source.on('sample', (sample) => samples.push(sample));
    await ovs.addSampleFlow({ inPort: 1, domain: 0x2b000001, point: 77, output: 2 });
  }, 60_000);
  afterAll(async () => {
    await source?.[Symbol.asyncDispose]();
    await ovs?.stop();
  });
  afterEach(async () => {
    await ovs.vsctl('--', '--all', 'destroy', 'Flow_Sample_Collector_Set');
  });

  it('makes set 42 with an IPFIX row of its own, OVS exports to the source; remove takes both away and the export stops', async () => {
    const target = `127.0.0.1:${source.port}`;
    const add = await runCli(['collector', 'add', '--ipfix', target, ...db()]);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toBe(`${target}\n`);
    expect(add.stderr).toContain('IPFIX makes every sampled packet an upcall to ovs-vswitchd');
    expect(add.stderr).toContain('meter=slowpath');
    const list = await runCli(['collector', 'list', ...db()]);
    expect(list.stdout).toMatch(new RegExp(`br0\\s+42\\s+-\\s+${target.replace(/\./g, '\\.')}\\s+ovn-psample \\(ours\\)`));
    expect(list.stdout).toMatch(/psample on br0 \(dummy datapath\): no\./);

    const before = samples.length;
    await until(async () => {
      await ovs.receive('p1', PACKET);
      return samples.length > before;
    }, 'a record from OVS');
    expect(samples.at(-1)).toMatchObject({ observationDomainId: 0x2b000001, observationPointId: 77 });

    const remove = await runCli(['collector', 'remove', ...db()]);
    expect(remove.code, remove.stderr).toBe(0);
    expect(await rows('Flow_Sample_Collector_Set')).toEqual([]);
    expect(await rows('IPFIX')).toEqual([]);
    // Give ovs-vswitchd the change, then nothing more arrives.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const after = samples.length;
    await ovs.receive('p1', PACKET);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(samples.length).toBe(after);
  });

  it("attaches its IPFIX row to another tool's set, and remove detaches only that", async () => {
    await ovs.addCollectorSet({ owner: 'ovnk-debug' });
    const target = `127.0.0.1:${source.port}`;
    const local = await LocalOvs.open(ovs.remote);
    try {
      const claim = await addIpfixCollector(local, { bridge: 'br0', target });
      expect(claim.made).toBe('ipfix');
      expect(claim.set.owner).toBe('ovnk-debug');
      // Adding again reuses it.
      expect((await addIpfixCollector(local, { bridge: 'br0', target })).made).toBe('nothing');
      expect(await releaseIpfixCollector(local, claim)).toBe(true);
    } finally {
      await local.close();
    }
    const sets = await rows('Flow_Sample_Collector_Set');
    expect(sets).toHaveLength(1);
    expect(JSON.stringify(sets[0])).toContain('ovnk-debug');
    expect(await rows('IPFIX')).toEqual([]);
  });

  it("never changes someone else's IPFIX row: a set exporting elsewhere is refused, unchanged", async () => {
    await ovs.addCollectorSet({ ipfixTarget: '192.0.2.9:4739', owner: 'netobserv' });
    const add = await runCli(['collector', 'add', '--ipfix', `127.0.0.1:${source.port}`, ...db()]);
    expect(add.code).toBe(1);
    expect(add.stderr).toMatch(
      /already exports IPFIX to 192\.0\.2\.9:4739.*never changes an IPFIX row it did not make.*OVS_COLLECTOR_CONFLICT/,
    );
    const remove = await runCli(['collector', 'remove', ...db()]);
    expect(remove.code).toBe(1);
    expect(JSON.stringify(await rows('IPFIX'))).toContain('192.0.2.9:4739');
  });

  it('wrong usage: exit 2 before anything is changed', async () => {
    for (const args of [
      ['--ipfix', 'localhost:4739'],
      ['--ipfix', '127.0.0.1:0'],
      ['--force-ipfix'],
      ['--ipfix', '127.0.0.1:4739', '--group', '5'],
    ]) {
      const run = await runCli(['collector', 'add', ...args, ...db()]);
      expect(run.code, args.join(' ')).toBe(2);
    }
    expect(await rows('Flow_Sample_Collector_Set')).toEqual([]);
  });
});

describe('collector add --ipfix on a node whose datapath has psample (OVS 3.5 schema)', () => {
  it('refuses (every sample would cost an upcall and come twice) unless --force-ipfix, which warns', async () => {
    const node = await startNodeOvs({ psample: 'true' });
    try {
      const local = await LocalOvs.open(node.remote);
      await expect(addIpfixCollector(local, { target: '127.0.0.1:4739' })).rejects.toThrow(OvsIpfixNotNeededError);
      await local.close();
      const refused = await runCli(['collector', 'add', '--ipfix', '127.0.0.1:4739', '--db', node.remote]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/found the psample action.*send it twice.*--force-ipfix.*OVS_IPFIX_NOT_NEEDED/);
      expect(await node.collectorSetRows()).toEqual([]);
      const forced = await runCli([
        'collector',
        'add',
        '--ipfix',
        '127.0.0.1:4739',
        '--force-ipfix',
        '--db',
        node.remote,
        '--format',
        'json',
      ]);
      expect(forced.code, forced.stderr).toBe(0);
      expect(JSON.parse(forced.stdout).ipfix).toMatchObject({ target: '127.0.0.1:4739', made: 'set', forced: true });
      expect(forced.stderr).toContain('--force-ipfix');
      // OVS 3.5 has template_interval: the row repeats its templates every 10 s, so a collector that starts later decodes soon.
      const [ipfix] = (await node.writer.transact('Open_vSwitch', [
        { op: 'select', table: 'IPFIX', where: [], columns: ['targets', 'template_interval'] },
      ])) as [{ rows: unknown[] }];
      expect(ipfix.rows).toEqual([{ targets: '127.0.0.1:4739', template_interval: OWN_ROW_TEMPLATE_INTERVAL_S }]);
      const remove = await runCli(['collector', 'remove', '--db', node.remote]);
      expect(remove.code).toBe(0);
      expect(await node.collectorSetRows()).toEqual([]);
    } finally {
      await node.stop();
    }
  });
});
