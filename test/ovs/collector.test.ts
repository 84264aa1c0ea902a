import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addCollector, releaseCollector } from '../../src/ovs/collector';
import { CollectorWatch } from '../../src/ovs/collector-watch';
import { collectorSets } from '../../src/ovs/collector-set';
import { ownerExternalIds, thisProcess } from '../../src/ovs/collector-owner';
import { LocalOvs } from '../../src/ovs/local-ovs';
import { OvsBridgeNotFoundError, OvsPsampleUnsupportedError } from '../../src/ovs/errors';
import { OvsdbClient } from '../../src/ovsdb/client';
import { OvsdbServer } from '../support/ovsdb-server';
import { runCli } from '../support/cli';
import { eventually } from '../ovn/support/ovn-databases';
import { startNodeOvs, type NodeOvs } from './support/ovs-database';
import { vswitchSchemaPath } from './support/vswitch-schema';

const opened: LocalOvs[] = [];
async function open(node: NodeOvs): Promise<LocalOvs> {
  const ovs = await LocalOvs.open(node.remote);
  opened.push(ovs);
  return ovs;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((ovs) => ovs.close()));
});

describe('collector on a node whose datapath has psample (OVS 3.5 schema)', () => {
  let node: NodeOvs;
  beforeAll(async () => {
    node = await startNodeOvs({ psample: 'true' });
  });
  afterAll(() => node?.stop());
  afterEach(async () => {
    for (const row of await node.collectorSetRows()) await node.deleteCollectorSet(row._uuid);
  });

  it('collector add creates set 42 on br-int marked as ours and prints its group; add again reuses it; remove removes it', async () => {
    const first = await runCli(['collector', 'add', '--db', node.remote]);
    expect(first.code).toBe(0);
    expect(first.stdout).toBe('42\n');
    expect(first.stderr).toMatch(/created Flow_Sample_Collector_Set 42 on br-int with psample group 42/);
    const rows = await node.collectorSetRows();
    expect(rows).toEqual([expect.objectContaining({ id: 42, local_group_id: 42, external_ids: { owner: 'ovn-psample' } })]);

    const again = await runCli(['collector', 'add', '--db', node.remote, '--group', '7', '--format', 'json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      group: 42,
      created: false,
      set: { id: 42, ours: true },
      psample: { supported: true },
    });
    expect(again.stderr).toMatch(/--group 7 ignored: the existing set uses group 42/);

    const list = await runCli(['collector', 'list', '--db', node.remote]);
    expect(list.stdout).toMatch(
      /^BRIDGE\s+ID\s+PSAMPLE-GROUP\s+IPFIX\s+OWNER\nbr-int\s+42\s+42\s+no\s+ovn-psample \(ours\)\npsample on br-int \(system datapath, OVS 3\.5\.0\): yes\./,
    );

    const removed = await runCli(['collector', 'remove', '--db', node.remote]);
    expect(removed.code).toBe(0);
    expect(removed.stderr).toMatch(/removed Flow_Sample_Collector_Set 42 on br-int \(psample group 42\)/);
    expect(await node.collectorSetRows()).toEqual([]);
    const nothing = await runCli(['collector', 'remove', '--db', node.remote]);
    expect(nothing.code).toBe(0);
    expect(nothing.stderr).toMatch(/no Flow_Sample_Collector_Set 42 on br-int: nothing to remove/);
  });

  it("reuses the group of ovnkube-observ's set without touching it, and refuses to remove it", async () => {
    const uuid = await node.insertCollectorSet({ id: 42, localGroupId: 123, externalIds: { owner: 'ovnk-debug' } });
    const added = await runCli(['collector', 'add', '--db', node.remote, '--format', 'json']);
    expect(added.code).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ group: 123, created: false, set: { uuid, owner: 'ovnk-debug', ours: false } });
    expect(added.stderr).toMatch(/already sends samples to psample group 123 \(owned by ovnk-debug\): reusing it unchanged/);

    const refused = await runCli(['collector', 'remove', '--db', node.remote]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/owned by ovnk-debug: ovn-psample removes only sets it made.*OVS_COLLECTOR_CONFLICT/);
    expect(await node.collectorSetRows()).toEqual([{ _uuid: uuid, id: 42, local_group_id: 123, external_ids: { owner: 'ovnk-debug' } }]);
  });

  it('refuses a set without local_group_id and says what to do, leaving it as it was', async () => {
    const uuid = await node.insertCollectorSet({ id: 42, externalIds: { owner: 'netobserv' } });
    const refused = await runCli(['collector', 'add', '--db', node.remote]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(
      /Flow_Sample_Collector_Set 42 on br-int exists without local_group_id \(owned by netobserv\).*ovs-vsctl set Flow_Sample_Collector_Set [0-9a-f-]+ local_group_id=N.*another --id.*OVS_COLLECTOR_CONFLICT/,
    );
    expect(await node.collectorSetRows()).toEqual([
      { _uuid: uuid, id: 42, local_group_id: undefined, external_ids: { owner: 'netobserv' } },
    ]);
  });

  it('another --id and --group create a second set alongside', async () => {
    await node.insertCollectorSet({ id: 42, localGroupId: 123, externalIds: { owner: 'ovnk-debug' } });
    const added = await runCli(['collector', 'add', '--db', node.remote, '--id', '7', '--group', '77']);
    expect(added.stdout).toBe('77\n');
    const ovs = await open(node);
    expect(collectorSets(ovs).map((set) => [set.id, set.localGroupId, set.owner])).toEqual([
      [7, 77, 'ovn-psample'],
      [42, 123, 'ovnk-debug'],
    ]);
  });

  it('two writers adding at once: one creates the set, the other reuses it', async () => {
    const [a, b] = [await open(node), await open(node)];
    const claims = await Promise.all([addCollector(a, { group: 5 }), addCollector(b, { group: 6 })]);
    expect(claims.map((claim) => claim.owned).sort()).toEqual([false, true]);
    expect(claims[0].group).toBe(claims[1].group);
    expect(await node.collectorSetRows()).toHaveLength(1);
  });

  it('releaseCollector removes only the set its claim made, and only while it still carries our mark', async () => {
    const ovs = await open(node);
    const claim = await addCollector(ovs, { markOwner: true });
    expect(claim).toMatchObject({ owned: true, group: 42, set: { ours: true, ownerProcess: thisProcess() } });
    // Someone takes the row over: it is theirs now.
    await node.writer.transact('Open_vSwitch', [
      {
        op: 'update',
        table: 'Flow_Sample_Collector_Set',
        where: [['_uuid', '==', ['uuid', claim.set.uuid]]],
        row: { external_ids: ['map', [['owner', 'ovnk-debug']]] },
      },
    ]);
    expect(await releaseCollector(ovs, claim)).toBe(false);
    expect(await node.collectorSetRows()).toHaveLength(1);
  });

  it("a watch's set left by a dead process is taken over (and removed at release); a live one's is only reused", async () => {
    const dead = 2 ** 22 + 1; // above pid_max's default: no such process
    await node.insertCollectorSet({ id: 42, localGroupId: 42, externalIds: { owner: 'ovn-psample', 'ovn-psample-pid': String(dead) } });
    const ovs = await open(node);
    const orphan = await addCollector(ovs, { markOwner: true });
    expect(orphan.owned).toBe(true);
    expect(await releaseCollector(ovs, orphan)).toBe(true);

    await node.insertCollectorSet({
      id: 42,
      localGroupId: 42,
      externalIds: { owner: 'ovn-psample', 'ovn-psample-pid': String(process.ppid) },
    });
    const shared = await addCollector(ovs, { markOwner: true });
    expect(shared.owned).toBe(false);
    expect(await releaseCollector(ovs, shared)).toBe(false);
  });

  describe('a set a watch marked, judged by what it records of its owner', () => {
    const self = thisProcess();
    const parent = (): Record<string, string> => {
      const stat = readFileSync(`/proc/${process.ppid}/stat`, 'latin1');
      return {
        owner: 'ovn-psample',
        'ovn-psample-pid': String(process.ppid),
        'ovn-psample-pidns': self.pidNamespace!,
        'ovn-psample-netns': self.netNamespace!,
        'ovn-psample-boot-id': self.bootId!,
        'ovn-psample-start-time': stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!,
      };
    };
    const takeOver = async (externalIds: Record<string, string>): Promise<Awaited<ReturnType<typeof addCollector>>> => {
      await node.insertCollectorSet({ id: 42, localGroupId: 42, externalIds: { ...externalIds, extra: 'kept' } });
      return addCollector(await open(node), { markOwner: true });
    };

    it('a live owner (our parent, with its start time) keeps its set', async () => {
      const claim = await takeOver(parent());
      expect(claim).toMatchObject({ owned: false, previousOwner: { alive: true, reason: `process ${process.ppid} still runs` } });
      expect((await node.collectorSetRows())[0]!.external_ids).toEqual({ ...parent(), extra: 'kept' });
    });

    it.each([
      [
        'the node booted since',
        { 'ovn-psample-boot-id': '00000000-0000-4000-8000-000000000000' },
        'it was made before the node last booted',
      ],
      ['its pid is another process now', { 'ovn-psample-start-time': '1' }, `pid ${process.ppid} is another process now`],
      [
        'its pid is this process now (pid 1 of a pod)',
        { 'ovn-psample-pid': String(process.pid), 'ovn-psample-start-time': '1' },
        `pid ${process.pid} is this process now`,
      ],
      ['it left no process', { 'ovn-psample-pid': String(2 ** 22 + 1) }, `no process ${2 ** 22 + 1} is left`],
      [
        'it ran in another pid namespace of this network namespace and its beacon is gone',
        { 'ovn-psample-pidns': '1' },
        `process ${process.ppid} of pid namespace 1 has exited`,
      ],
    ])(
      'an owner is dead when %s: the set is taken over, stamped with this process, and removed at release',
      async (_case, change, reason) => {
        const claim = await takeOver({ ...parent(), ...change });
        expect(claim).toMatchObject({ owned: true, previousOwner: { alive: false, reason } });
        const [row] = await node.collectorSetRows();
        expect(row!.external_ids).toEqual({ extra: 'kept', ...Object.fromEntries([['owner', 'ovn-psample'], ...ownerExternalIds(self)]) });
        expect(await releaseCollector(await open(node), claim)).toBe(true);
        expect(await node.collectorSetRows()).toEqual([]);
      },
    );

    it('an owner in another pid and network namespace cannot be judged: its set is left to it', async () => {
      const claim = await takeOver({ ...parent(), 'ovn-psample-pidns': '1', 'ovn-psample-netns': '1' });
      expect(claim).toMatchObject({ owned: false, previousOwner: { alive: true } });
    });

    it("two processes taking over a dead owner's set at once: exactly one owns it", async () => {
      await node.insertCollectorSet({ id: 42, localGroupId: 42, externalIds: { ...parent(), 'ovn-psample-start-time': '1' } });
      const [a, b] = [await open(node), await open(node)];
      const claims = await Promise.all([addCollector(a, { markOwner: true }), addCollector(b, { markOwner: true })]);
      expect(claims.map((claim) => claim.owned).sort()).toEqual([false, true]);
    });
  });

  it('CollectorWatch reports a set vanishing under it, coming back, and changing group', async () => {
    const ovs = await open(node);
    const uuid = await node.insertCollectorSet({ id: 42, localGroupId: 123, externalIds: { owner: 'ovnk-debug' } });
    await eventually(() => expect(collectorSets(ovs)).toHaveLength(1));
    const watch = new CollectorWatch(ovs, await node.bridgeUuid(), 42);
    const seen: string[] = [];
    watch.on('vanished', (set) => seen.push(`vanished ${set.localGroupId}`));
    watch.on('appeared', (set) => seen.push(`appeared ${set.localGroupId}`));
    watch.on('changed', (set, before) => seen.push(`changed ${before.localGroupId}->${set.localGroupId}`));
    await node.deleteCollectorSet(uuid);
    await eventually(() => expect(seen).toEqual(['vanished 123']));
    const again = await node.insertCollectorSet({ id: 42, localGroupId: 124 });
    await eventually(() => expect(seen).toEqual(['vanished 123', 'appeared 124']));
    await node.writer.transact('Open_vSwitch', [
      { op: 'update', table: 'Flow_Sample_Collector_Set', where: [['_uuid', '==', ['uuid', again]]], row: { local_group_id: 125 } },
    ]);
    await eventually(() => expect(seen).toEqual(['vanished 123', 'appeared 124', 'changed 124->125']));
    watch.close();
  });

  it('names the missing bridge', async () => {
    const ovs = await open(node);
    await expect(addCollector(ovs, { bridge: 'br-nope' })).rejects.toThrow(OvsBridgeNotFoundError);
    const run = await runCli(['collector', 'add', '--db', node.remote, '--bridge', 'br-nope']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/no bridge br-nope: ovn-controller creates br-int.*--bridge.*OVS_BRIDGE_NOT_FOUND/);
  });
});

describe('collector where the datapath cannot emit psample samples', () => {
  it.each([
    [{ psample: 'false' as const }, /found no psample action: the kernel's openvswitch module is older than Linux 6\.11/],
    [{ datapathType: 'netdev' }, /uses the netdev datapath, which has no psample action/],
    [{ ovsVersion: '3.3.1' }, /Open vSwitch 3\.3\.1 has no local sampling.*upgrade OVS/],
  ])('refuses to add a set, explaining what is missing: %j', async (shape, reason) => {
    const node = await startNodeOvs(shape);
    try {
      const ovs = await LocalOvs.open(node.remote);
      await expect(addCollector(ovs, {})).rejects.toThrow(OvsPsampleUnsupportedError);
      await ovs.close();
      const run = await runCli(['collector', 'add', '--db', node.remote]);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(reason);
      expect(run.stderr).toMatch(/OVS_PSAMPLE_UNSUPPORTED/);
      expect(await node.collectorSetRows()).toEqual([]);
    } finally {
      await node.stop();
    }
  });

  it('adds the set but warns when OVS has not said (no Datapath row)', async () => {
    const node = await startNodeOvs({ datapathRow: false });
    try {
      const run = await runCli(['collector', 'add', '--db', node.remote]);
      expect(run.code).toBe(0);
      expect(run.stdout).toBe('42\n');
      expect(run.stderr).toMatch(/no Datapath row for \\?"system\\?" \(ovn-controller creates it\)/);
    } finally {
      await node.stop();
    }
  });

  it('refuses local sampling on an OVS database whose schema predates it (no local_group_id), and says IPFIX is there', async () => {
    const schema = JSON.parse(readFileSync(await vswitchSchemaPath(), 'utf8')) as {
      version: string;
      tables: Record<string, { columns: Record<string, unknown> }>;
    };
    delete schema.tables.Flow_Sample_Collector_Set!.columns.local_group_id;
    schema.version = '8.3.0';
    const path = join(mkdtempSync(join(tmpdir(), 'ovn-psample-old-ovs-')), 'vswitch.ovsschema');
    writeFileSync(path, JSON.stringify(schema));
    const server = await OvsdbServer.start({ schema: path });
    try {
      const writer = await OvsdbClient.connect(server.unixRemote);
      await writer.transact('Open_vSwitch', [
        { op: 'insert', table: 'Bridge', 'uuid-name': 'br', row: { name: 'br-int' } },
        { op: 'insert', table: 'Open_vSwitch', row: { bridges: ['set', [['named-uuid', 'br']]] } },
      ]);
      await writer.close();
      // The database is read (an OVS 3.0-3.3 node exports IPFIX: collector add --ipfix), but not for psample.
      const ovs = await LocalOvs.open(server.unixRemote);
      opened.push(ovs);
      await expect(addCollector(ovs)).rejects.toThrow(OvsPsampleUnsupportedError);
      const list = await runCli(['collector', 'list', '--db', server.unixRemote]);
      expect(list.code).toBe(0);
      expect(list.stdout).toMatch(
        /psample on br-int \(system datapath\): no\. The OVS database \(schema 8\.3\.0\) has no Flow_Sample_Collector_Set\.local_group_id: Open vSwitch is older than 3\.4, without local sampling\..*collector add --ipfix/,
      );
      const add = await runCli(['collector', 'add', '--db', server.unixRemote]);
      expect(add.code).toBe(1);
      expect(add.stderr).toMatch(
        /older than 3\.4, without local sampling.*collector add --ipfix 127\.0\.0\.1:4739.*OVS_PSAMPLE_UNSUPPORTED/,
      );
    } finally {
      await server.stop();
    }
  });
});

it('collector refuses wrong usage with exit 2 before connecting', async () => {
  const run = await runCli(['collector', 'add', '--id', 'x', '--db', 'unix:/nonexistent']);
  expect(run.code).toBe(2);
  expect(run.stderr).toMatch(/--id x: give a whole number from 0 to 4294967295/);
});

it('collector says where it looked when the OVS database is not there', async () => {
  const run = await runCli(['collector', 'list', '--db', 'unix:/nonexistent/db.sock']);
  expect(run.code).toBe(1);
  expect(run.stderr).toMatch(
    /No OVS database at unix:\/nonexistent\/db\.sock: run this as root on a node where Open vSwitch runs, or pass --db REMOTE/,
  );
});

it('collector speaks to an ssl: OVS database with the credentials named as ovs-vsctl names them', async () => {
  const server = await OvsdbServer.start({ schema: await vswitchSchemaPath(), ssl: true });
  try {
    const pki = server.pki!;
    const ssl = ['--private-key', pki.clientKey, '--certificate', pki.clientCert, '--ca-cert', pki.caCert];
    const run = await runCli(['collector', 'list', '--db', server.sslRemote, ...ssl, '--format', 'json']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ sets: [], psample: { bridge: 'br-int', supported: null } });
    const partial = await runCli(['collector', 'list', '--db', server.sslRemote, '--private-key', pki.clientKey]);
    expect(partial.code).toBe(2);
    expect(partial.stderr).toMatch(/ssl: remotes need all three of --private-key, --certificate and --ca-cert/);
  } finally {
    await server.stop();
  }
});
