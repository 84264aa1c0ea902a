import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { createInjector, encodePsample } from '../../src/index';
import { startNodeOvs, type NodeOvs } from '../ovs/support/ovs-database';
import { injectedSourceArgs, jsonLines, startCli, type CliProcess } from '../support/cli';
import { fileNetns } from '../support/netns';

const GROUP = 15;
const ns = fileNetns('ovnps-cli-privileges');
let node: NodeOvs;
beforeAll(async () => {
  node = await startNodeOvs({ psample: 'true' });
});
afterAll(() => node?.stop());

const listen = (args: readonly string[]): CliProcess => startCli(injectedSourceArgs('listen', ns.name, GROUP, args));
const watch = (args: readonly string[]): CliProcess =>
  startCli(injectedSourceArgs('watch', ns.name, GROUP, ['--no-enrich', '--db', node.remote, ...args]));

/** uid, CapEff and NoNewPrivs of every thread of a process, as the kernel shows them. */
function threadsOf(pid: number): Array<{ uid: string; capEff: string; noNewPrivs: string }> {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
    const field = (key: string): string => status.match(new RegExp(`^${key}:[ \\t]*(.*)$`, 'm'))![1]!.trim();
    return { uid: field('Uid'), capEff: field('CapEff'), noNewPrivs: field('NoNewPrivs') };
  });
}

it('listen --drop-privileges=nobody: says what it gave up, and goes on printing samples', async () => {
  const run = listen(['--drop-privileges=nobody', '--count', '3']);
  await run.listening;
  const injector = createInjector({ protocol: 'usersock', groupId: GROUP, netns: ns.name });
  for (let seq = 0; seq < 3; seq++) injector.send(encodePsample({ group: 10, groupSeq: seq }));
  injector.close();
  expect(await run.exited).toBe(0);
  expect(jsonLines<{ groupSeq: number }>(run.stdout()).map((l) => l.groupSeq)).toEqual([0, 1, 2]);
  expect(run.stderr()).toMatch(
    /privileges dropped: uid 65534 gid 65534 groups 65534, no capabilities in \d+ of \d+ threads, empty bounding set, no_new_privs/,
  );
});

it('watch --drop-privileges: every thread of the running process is without capabilities', async () => {
  const run = watch(['--group', '10', '--drop-privileges=nobody']);
  const dropped = await run.logged((record) => /^privileges dropped/.test(String(record.msg)), 'the drop');
  expect(dropped).toMatchObject({ level: expect.any(Number), uid: 65534, gid: 65534, switchedUser: true, boundingCleared: true });
  await run.listening;
  const threads = threadsOf(run.child.pid!);
  expect(threads.length).toBeGreaterThanOrEqual(8);
  for (const thread of threads) expect(thread).toMatchObject({ uid: '65534\t65534\t65534\t65534', capEff: '0000000000000000' });
  expect(await run.stop('SIGINT')).toBe(0);
});

it('watch --add-ovs-collector --drop-privileges keeps root (owner of the OVS socket) and removes its set at exit', async () => {
  const run = watch(['--add-ovs-collector', '--drop-privileges']);
  await run.listening;
  expect(run.records().map((record) => String(record.msg))).toContainEqual(expect.stringMatching(/^privileges dropped: uid 0 gid 0/));
  expect(await node.collectorSetRows()).toEqual([expect.objectContaining({ id: 42, local_group_id: 42 })]);
  expect(await run.stop('SIGTERM')).toBe(0);
  expect(await node.collectorSetRows()).toEqual([]);
});

it('refuses --add-ovs-collector with --drop-privileges=USER (exit 2), before anything is made', async () => {
  const run = watch(['--add-ovs-collector', '--drop-privileges=nobody']);
  expect(await run.exited).toBe(2);
  expect(run.stderr()).toMatch(
    /--add-ovs-collector with --drop-privileges=USER: removing the collector set at exit needs write access to the OVS database's socket/,
  );
  expect(await node.collectorSetRows()).toEqual([]);
});

it('a malformed --drop-privileges value is a usage error (exit 2)', async () => {
  const run = listen(['--drop-privileges=a:b:c']);
  expect(await run.exited).toBe(2);
  expect(run.stderr()).toMatch(/--drop-privileges=a:b:c: give USER or USER:GROUP/);
});
