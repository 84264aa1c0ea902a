import { readFileSync, readlinkSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fileNetns } from '../support/netns';
import { createServer } from 'node:net';
import { startNodeOvs, type NodeOvs } from '../ovs/support/ovs-database';
import { freePort } from '../support/ovsdb-server';
import { cliPid, injectedSourceArgs, message, startCli, type StartCliOptions } from '../support/cli';

const ns = fileNetns('ovnps-watch-collector');
let node: NodeOvs;

beforeAll(async () => {
  node = await startNodeOvs({ psample: 'true' });
});
afterAll(() => node?.stop());
afterEach(async () => {
  for (const row of await node.collectorSetRows()) await node.deleteCollectorSet(row._uuid);
});

/** What /proc says of a process, as a collector set records its owner. */
function processIdentity(pid: number | 'self'): Record<string, string> {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  const inode = (ns: string): string => /\[(\d+)\]/.exec(readlinkSync(`/proc/${pid}/ns/${ns}`))![1]!;
  return {
    'ovn-psample-pidns': inode('pid'),
    'ovn-psample-netns': inode('net'),
    'ovn-psample-boot-id': readFileSync('/proc/sys/kernel/random/boot_id', 'latin1').trim(),
    'ovn-psample-start-time': stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!,
  };
}

function watch(args: readonly string[], options: StartCliOptions = {}): ReturnType<typeof startCli> {
  return startCli(injectedSourceArgs('watch', ns.name, 13, ['--no-enrich', '--db', node.remote, ...args]), options);
}

describe('watch and the OVS collector set', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('--add-ovs-collector adds set 42 with group 42 on start and removes it on %s', async (signal) => {
    const run = watch(['--add-ovs-collector']);
    const listening = await run.listening;
    expect(listening).toMatchObject({ groups: [42] });
    const rows = await node.collectorSetRows();
    expect(rows).toEqual([
      expect.objectContaining({
        id: 42,
        local_group_id: 42,
        external_ids: { owner: 'ovn-psample', 'ovn-psample-pid': String(run.child.pid), ...processIdentity(run.child.pid!) },
      }),
    ]);
    run.child.kill(signal);
    expect(await run.exited).toBe(0);
    expect(run.records().map((record) => record.msg)).toContain(
      'removed Flow_Sample_Collector_Set 42 on br-int (made by ovn-psample watch (pid ' + String(run.child.pid) + '))',
    );
    expect(await node.collectorSetRows()).toEqual([]);
  });

  it('a watch SIGKILLed in a pod without hostPID (every process is pid 1) leaves its set to the next pod, which removes it at exit', async () => {
    const killed = watch(['--add-ovs-collector'], { pidNamespace: true });
    await killed.listening;
    const killedPid = cliPid(killed);
    const before = processIdentity(killedPid);
    expect(await node.collectorSetRows()).toEqual([
      expect.objectContaining({ external_ids: { owner: 'ovn-psample', 'ovn-psample-pid': '1', ...before } }),
    ]);
    process.kill(killedPid, 'SIGKILL');
    await killed.exited;
    expect(await node.collectorSetRows()).toHaveLength(1);

    const next = watch(['--add-ovs-collector'], { pidNamespace: true });
    expect(await next.listening).toMatchObject({ groups: [42] });
    const nextPid = cliPid(next);
    // The kernel recycles namespace inode numbers: the new pod's pid namespace may carry the dead one's, and then its pid 1 is told apart by its start time.
    const reason =
      processIdentity(nextPid)['ovn-psample-pidns'] === before['ovn-psample-pidns']
        ? 'pid 1 is this process now'
        : `process 1 of pid namespace ${before['ovn-psample-pidns']} has exited`;
    expect(next.records().find(message(/^took over/))).toMatchObject({
      msg: `took over Flow_Sample_Collector_Set 42 on br-int, psample group 42, from a watch that is gone (${reason}); it is removed at exit`,
    });
    const after = processIdentity(nextPid);
    expect(await node.collectorSetRows()).toEqual([
      expect.objectContaining({ external_ids: { owner: 'ovn-psample', 'ovn-psample-pid': '1', ...after } }),
    ]);
    process.kill(nextPid, 'SIGTERM');
    expect(await next.exited).toBe(0);
    expect(await node.collectorSetRows()).toEqual([]);
  });

  it('a live watch in another pod keeps its set: a second one, pid 1 as well, reuses it and leaves it at exit', async () => {
    const first = watch(['--add-ovs-collector'], { pidNamespace: true });
    await first.listening;
    const firstPid = cliPid(first);
    const second = watch(['--add-ovs-collector'], { pidNamespace: true });
    await second.listening;
    const pidns = processIdentity(firstPid)['ovn-psample-pidns'];
    expect(second.records().find(message(/^reusing/))).toMatchObject({
      msg: `reusing Flow_Sample_Collector_Set 42 on br-int (made by ovn-psample watch (pid 1)), psample group 42 (process 1 of pid namespace ${pidns} still runs)`,
    });
    process.kill(cliPid(second), 'SIGTERM');
    expect(await second.exited).toBe(0);
    expect(await node.collectorSetRows()).toEqual([
      expect.objectContaining({ external_ids: expect.objectContaining({ 'ovn-psample-pidns': pidns }) }),
    ]);
    process.kill(firstPid, 'SIGTERM');
    expect(await first.exited).toBe(0);
    expect(await node.collectorSetRows()).toEqual([]);
  });

  it('without --group, listens to the group of the set someone else made, leaves it at exit, and says so when it vanishes', async () => {
    const uuid = await node.insertCollectorSet({ id: 42, localGroupId: 123, externalIds: { owner: 'ovnk-debug' } });
    const run = watch([]);
    expect(await run.listening).toMatchObject({ groups: [123] });
    expect(run.records().map((record) => record.msg)).toContain(
      'listening to psample group 123 of Flow_Sample_Collector_Set 42 on br-int (owned by ovnk-debug)',
    );
    await node.deleteCollectorSet(uuid); // ovnkube-observ exits
    const warning = await run.logged(message(/was deleted/), 'the vanished warning');
    expect(warning).toMatchObject({
      level: 40,
      msg: "Flow_Sample_Collector_Set 42 on br-int (owned by ovnk-debug) was deleted: OVN's samples no longer reach psample group 123",
    });
    await node.insertCollectorSet({ id: 42, localGroupId: 124, externalIds: { owner: 'ovnk-debug' } });
    await run.logged(message(/now sends to psample group 124, not 123: no more samples reach this watch; restart it/), 'the group change');
    expect(await run.stop('SIGINT')).toBe(0);
    expect(await node.collectorSetRows()).toEqual([
      expect.objectContaining({ local_group_id: 124, external_ids: { owner: 'ovnk-debug' } }),
    ]);
  });

  it('--add-ovs-collector reuses a set with a group, and when it vanishes makes its own with that group (removed at exit)', async () => {
    const uuid = await node.insertCollectorSet({ id: 42, localGroupId: 123, externalIds: { owner: 'ovnk-debug' } });
    const run = watch(['--add-ovs-collector']);
    expect(await run.listening).toMatchObject({ groups: [123] });
    await node.deleteCollectorSet(uuid);
    await run.logged(message(/^added Flow_Sample_Collector_Set 42 on br-int .* again with psample group 123$/), 'the set made again');
    expect(await node.collectorSetRows()).toEqual([
      expect.objectContaining({ local_group_id: 123, external_ids: expect.objectContaining({ owner: 'ovn-psample' }) }),
    ]);
    expect(await run.stop('SIGINT')).toBe(0);
    expect(await node.collectorSetRows()).toEqual([]);
  });

  it('an --output that cannot be written fails before any collector set is made', async () => {
    const run = watch(['--add-ovs-collector', '--output', '/nonexistent/dir/events.txt']);
    expect(await run.exited).toBe(1);
    expect(run.records().find((record) => record.level === 60)).toMatchObject({
      code: 'OUTPUT_FILE',
      msg: expect.stringMatching(/^Cannot write \/nonexistent\/dir\/events\.txt \(ENOENT/),
    });
    expect(await node.collectorSetRows()).toEqual([]);
  });

  it('without --group and without a set, fails naming the three ways out (exit 1)', async () => {
    const run = watch([]);
    expect(await run.exited).toBe(1);
    expect(run.records().find((record) => record.level === 60)).toMatchObject({
      code: 'OVS_COLLECTOR_NOT_FOUND',
      msg: expect.stringMatching(
        /No Flow_Sample_Collector_Set 42 on br-int, so OVN's samples reach no psample group: run with --add-ovs-collector .*'ovn-psample collector add'.* --group N/,
      ),
    });
  });

  it('--add-ovs-collector refuses, and adds nothing, when the datapath lacks psample', async () => {
    const old = await startNodeOvs({ psample: 'false' });
    try {
      const run = startCli(injectedSourceArgs('watch', ns.name, 13, ['--no-enrich', '--db', old.remote, '--add-ovs-collector']));
      expect(await run.exited).toBe(1);
      expect(run.records().find((record) => record.level === 60)).toMatchObject({ code: 'OVS_PSAMPLE_UNSUPPORTED' });
      expect(await old.collectorSetRows()).toEqual([]);
    } finally {
      await old.stop();
    }
  });

  it.each([
    [
      ['--metrics', '$(HOST_IP):9479'],
      /--metrics \$\(HOST_IP\):9479: \$\(HOST_IP\) was not expanded: Kubernetes expands \$\(VAR\) in args only for a variable the container's env defines/,
    ],
    [['--metrics', '192.0.2.1:9479'], /--metrics 192\.0\.2\.1:9479: 192\.0\.2\.1 is not an address of this host/],
    [['--netns', 'no-such-ns-ovnps'], /--netns no-such-ns-ovnps: no network namespace at \/run\/netns\/no-such-ns-ovnps/],
    [['--nb', 'nowhere:6641'], /--nb nowhere:6641: Invalid OVSDB remote "nowhere:6641": the method must be unix:, tcp: or ssl:/],
    [['--db', 'unix:'], /--db unix:: Invalid OVSDB remote "unix:": unix: needs a socket path/],
  ])('%j is wrong usage, found before the collector set is added (exit 2)', async (args, why) => {
    const run = watch(['--add-ovs-collector', ...args]);
    expect(await run.exited).toBe(2);
    expect(run.records().find((record) => record.level === 60)).toMatchObject({ code: 'CLI_USAGE', msg: expect.stringMatching(why) });
    expect(await node.collectorSetRows()).toEqual([]);
  });

  it('a metrics port in use fails (exit 1) before the collector set is added', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as { port: number }).port;
      const run = watch(['--add-ovs-collector', '--metrics', `127.0.0.1:${port}`]);
      expect(await run.exited).toBe(1);
      expect(run.records().find((record) => record.level === 60)).toMatchObject({
        code: 'METRICS_LISTEN',
        msg: `--metrics 127.0.0.1:${port}: the port is in use by another process: pick another port [METRICS_LISTEN]`,
      });
      expect(await node.collectorSetRows()).toEqual([]);
    } finally {
      taken.close();
    }
  });

  it('/healthz answers while alive; /readyz turns ready with the set in place, not ready (503, logged, in the summary) when it vanishes', async () => {
    const uuid = await node.insertCollectorSet({ id: 42, localGroupId: 123, externalIds: { owner: 'ovnk-debug' } });
    const port = await freePort();
    const run = watch(['--metrics', `127.0.0.1:${port}`]);
    await run.listening;
    const get = async (path: string): Promise<[number, string]> => {
      const response = await fetch(`http://127.0.0.1:${port}${path}`);
      return [response.status, await response.text()];
    };
    expect(await get('/healthz')).toEqual([200, 'ok\n']);
    expect(await get('/readyz')).toEqual([200, 'ready\n']);
    await run.logged(message(/^ready$/), 'ready');
    await node.deleteCollectorSet(uuid);
    const why = "Flow_Sample_Collector_Set 42 on br-int is gone, so OVN's samples reach no psample group";
    await run.logged((record) => record.msg === `not ready: ${why}` && record.level === 40, 'not ready');
    expect(await get('/readyz')).toEqual([503, `not ready: ${why}\n`]);
    expect(await get('/healthz')).toEqual([200, 'ok\n']);
    expect(await run.stop('SIGTERM')).toBe(0);
    expect(run.records().find(message(/^summary:/))).toMatchObject({
      ready: false,
      everReady: true,
      notReady: [why],
      msg: expect.stringMatching(new RegExp(`; not ready at exit: ${why}$`)),
    });
  });
});
