import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { createInjector, encodePsample, NetnsNotFoundError, openPsample } from '../../src/index';
import { createNetns } from '../support/netns';
import { collectSamples, settle, waitFor } from '../support/receive';

const GROUP = 6;
const FAMILY = 34;
const source = { protocol: 'usersock', familyId: FAMILY, groupId: GROUP } as const;
let ns: ReturnType<typeof createNetns>;
beforeAll(() => {
  ns = createNetns('ovnps-netns');
});
afterAll(() => ns.remove());

function sendFrom(netns: string | undefined, groupSeqs: number[]): void {
  const injector = createInjector({ protocol: 'usersock', groupId: GROUP, netns });
  for (const seq of groupSeqs) injector.send(encodePsample({ group: 1, groupSeq: seq }, { familyId: FAMILY }));
  injector.close();
}

it('a socket opened with netns sees only that namespace, and the root socket only its own', async () => {
  const inside = openPsample({ netns: ns.name, source });
  const outside = openPsample({ source });
  const insideSamples = collectSamples(inside);
  const outsideSamples = collectSamples(outside);
  sendFrom(ns.name, [1, 2, 3]);
  sendFrom(undefined, [10, 11]);
  await waitFor(() => insideSamples.length === 3 && outsideSamples.length === 2);
  await settle();
  expect(insideSamples.map((s) => s.groupSeq)).toEqual([1, 2, 3]);
  expect(outsideSamples.map((s) => s.groupSeq)).toEqual([10, 11]);
  inside.close();
  outside.close();
});

it('accepts the namespace as a path and as a pid', async () => {
  const byPath = openPsample({ netns: `/run/netns/${ns.name}`, source });
  const byPid = openPsample({ netns: process.pid, source }); // our own namespace
  const viaPath = collectSamples(byPath);
  const viaPid = collectSamples(byPid);
  sendFrom(ns.name, [7]);
  sendFrom(undefined, [8]);
  await waitFor(() => viaPath.length === 1 && viaPid.length === 1);
  expect(viaPath[0]?.groupSeq).toBe(7);
  expect(viaPid[0]?.groupSeq).toBe(8);
  byPath.close();
  byPid.close();
});

it('with listenAllNsid reports the nsid of samples from a peer namespace', async () => {
  execFileSync('ip', ['netns', 'set', ns.name, '4242']);
  const all = openPsample({ listenAllNsid: true, source });
  const samples = collectSamples(all);
  sendFrom(ns.name, [1]);
  sendFrom(undefined, [2]);
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
