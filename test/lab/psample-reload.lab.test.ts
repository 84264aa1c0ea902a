import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { PsampleGapEvent } from '../../src/index';
import { loadModules, unloadModule } from './support/kernel';
import { createNetnsPair, deleteNetns, type NetnsEnd } from './support/netns';
import { startOvs, stopOvs } from './support/ovs';
import { collectSamples } from './support/samples';
import { runInNetns, traffic } from './support/shell';
import { openPsampleForEachTest } from './support/sockets';

// The psample module unloaded and loaded again under a live socket (a kernel module reload, an
// Open vSwitch upgrade): the kernel drops the socket's membership with the family, and the family
// comes back with a new id. The socket must follow it, and say there was a gap.
const GROUP = 71;

let sampled: NetnsEnd;
let peer: NetnsEnd;
let ovsWasRunning = false;

function addSampleFilter(): void {
  runInNetns(sampled.netns, 'tc', ['qdisc', 'add', 'dev', sampled.dev, 'clsact']);
  runInNetns(sampled.netns, 'tc', [
    'filter', 'add', 'dev', sampled.dev, 'ingress', 'protocol', 'ip', 'matchall',
    'action', 'sample', 'rate', '1', 'group', String(GROUP),
  ]);
}

/** The tc actions hold act_sample, which holds psample: they go with the qdisc. */
function removeSampleFilter(): void {
  runInNetns(sampled.netns, 'tc', ['qdisc', 'del', 'dev', sampled.dev, 'clsact']);
}

function waitForGaps(gaps: PsampleGapEvent[], count: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 30_000;
    const check = setInterval(() => {
      if (gaps.length >= count) resolve();
      else if (Date.now() > deadline) reject(new Error(`${gaps.length} gap events after 30 s, expected ${count}`));
      else return;
      clearInterval(check);
    }, 20);
  });
}

describe('psample unloaded and loaded again under a live socket (real kernel)', () => {
  const open = openPsampleForEachTest();
  beforeAll(() => {
    loadModules('psample', 'act_sample', 'cls_matchall', 'sch_ingress', 'veth');
    [sampled, peer] = createNetnsPair('rl', '10.81.0');
  });
  afterAll(() => {
    deleteNetns(sampled.netns, peer.netns);
    loadModules('psample', 'act_sample');
    if (ovsWasRunning) startOvs();
  });

  it('rejoins the re-registered family, samples flow again, and the gap is reported as an event and a counter', async () => {
    const socket = open({ netns: sampled.netns, groups: [GROUP] });
    const gaps: PsampleGapEvent[] = [];
    socket.on('gap', (gap) => gaps.push(gap));
    const familyBefore = socket.familyId;

    addSampleFilter();
    const before = collectSamples(socket, (s) => s.length >= 3, '3 samples before the reload');
    await traffic(peer.netns, 'ping', ['-c', '3', '-i', '0.2', sampled.ip]);
    expect((await before).every((s) => s.group === GROUP)).toBe(true);

    removeSampleFilter();
    ovsWasRunning = stopOvs();
    await unloadModule('psample');
    await waitForGaps(gaps, 1);
    loadModules('psample', 'act_sample');
    await waitForGaps(gaps, 2);

    addSampleFilter();
    const after = collectSamples(socket, (s) => s.length >= 3, '3 samples after the reload');
    await traffic(peer.netns, 'ping', ['-c', '3', '-i', '0.2', sampled.ip]);
    const samples = await after;
    removeSampleFilter();

    // A new group of the new family: its sequence starts again.
    expect(samples.map((s) => [s.group, s.groupSeq])).toEqual([[GROUP, 0], [GROUP, 1], [GROUP, 2]]);
    expect(gaps[0]).toEqual({ phase: 'start', total: 1 });
    expect(gaps[1]).toMatchObject({ phase: 'end', total: 1, familyId: socket.familyId, groupId: socket.groupId });
    expect(gaps[1]!.durationMs).toBeGreaterThan(0);
    expect(socket.stats()).toMatchObject({ familyGaps: 1, rejoins: 1, kernelDrops: 0, malformed: 0, foreign: 0 });
    console.log(`psample family id ${familyBefore} -> ${socket.familyId}, gap ${gaps[1]!.durationMs?.toFixed(1)} ms`);
  });
});
