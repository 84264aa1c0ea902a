import { execFileSync, spawn } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { createInjector, encodePsample, NetnsNotFoundError, openPsample } from '../../src/index';
import { createNetns } from '../support/netns';
import { collectSamples, settle, waitFor } from '../support/receive';

const GROUP = 6;
const FAMILY = 34;
const source = { protocol: 'usersock', familyId: FAMILY, groupId: GROUP } as const;
// Two namespaces of this run: `home` stands for "where the socket is", `peer` for another one.
// Neither is the host's, so another test run on this machine cannot reach them.
let home: ReturnType<typeof createNetns>;
let peer: ReturnType<typeof createNetns>;
beforeAll(() => {
  home = createNetns('ovnps-home');
  peer = createNetns('ovnps-peer');
});
afterAll(() => {
  home.remove();
  peer.remove();
});

function sendFrom(netns: string, groupSeqs: number[]): void {
  const injector = createInjector({ protocol: 'usersock', groupId: GROUP, netns });
  for (const seq of groupSeqs) injector.send(encodePsample({ group: 1, groupSeq: seq }, { familyId: FAMILY }));
  injector.close();
}

it('a socket opened with netns sees only that namespace', async () => {
  const inPeer = openPsample({ netns: peer.name, source });
  const inHome = openPsample({ netns: home.name, source });
  const peerSamples = collectSamples(inPeer);
  const homeSamples = collectSamples(inHome);
  sendFrom(peer.name, [1, 2, 3]);
  sendFrom(home.name, [10, 11]);
  await waitFor(() => peerSamples.length === 3 && homeSamples.length === 2);
  await settle();
  expect(peerSamples.map((s) => s.groupSeq)).toEqual([1, 2, 3]);
  expect(homeSamples.map((s) => s.groupSeq)).toEqual([10, 11]);
  inPeer.close();
  inHome.close();
});

it('accepts the namespace as a path and as a pid', async () => {
  const resident = spawn('ip', ['netns', 'exec', home.name, 'sleep', '60'], { stdio: 'ignore' });
  try {
    // `ip netns exec` execs sleep in place: the child's pid is in `home` once it runs sleep.
    await waitFor(() => {
      try {
        return execFileSync('readlink', [`/proc/${resident.pid}/exe`], { encoding: 'utf8' }).includes('sleep');
      } catch {
        return false;
      }
    });
    const byPath = openPsample({ netns: `/run/netns/${peer.name}`, source });
    const byPid = openPsample({ netns: resident.pid!, source });
    const viaPath = collectSamples(byPath);
    const viaPid = collectSamples(byPid);
    sendFrom(peer.name, [7]);
    sendFrom(home.name, [8]);
    await waitFor(() => viaPath.length === 1 && viaPid.length === 1);
    expect(viaPath[0]?.groupSeq).toBe(7);
    expect(viaPid[0]?.groupSeq).toBe(8);
    byPath.close();
    byPid.close();
  } finally {
    resident.kill();
  }
});

it('with listenAllNsid reports the nsid of samples from a peer namespace', async () => {
  // The peer's id as seen from `home`.
  execFileSync('ip', ['-n', home.name, 'netns', 'set', peer.name, '4242']);
  const all = openPsample({ netns: home.name, listenAllNsid: true, source });
  const samples = collectSamples(all);
  sendFrom(peer.name, [1]);
  sendFrom(home.name, [2]);
  await waitFor(() => samples.length === 2);
  const bySeq = new Map(samples.map((s) => [s.groupSeq, s.nsid]));
  expect(bySeq.get(1)).toBe(4242);
  expect(bySeq.get(2)).toBeUndefined();
  all.close();
});

it('fails with a typed error for a namespace that does not exist', () => {
  expect(() => openPsample({ netns: 'no-such-ns-ovnps', source })).toThrow(NetnsNotFoundError);
  try {
    openPsample({ netns: 'no-such-ns-ovnps', source });
  } catch (error) {
    expect((error as NetnsNotFoundError).code).toBe('NETNS_NOT_FOUND');
    expect((error as Error).message).toMatch(/ip netns list/);
  }
});
