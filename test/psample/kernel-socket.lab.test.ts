import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createInjector, encodePsample, type PsampleMessage } from '../../src/index';
import { createNetnsPair, deleteNetns, type NetnsEnd } from '../support/lab/netns';
import { settle, traffic } from '../support/lab/shell';
import { openPsampleForEachTest } from '../support/lab/sockets';
import { addClsact, addSampleFilter, deleteFilter, everyPacketTo, loadTcSampleModules } from '../support/lab/tc';

// What only a kernel with the psample family can show: its own group events on the "config"
// group, and that a root process multicasting on psample's "packets" group is not believed.
let sampled: NetnsEnd;
let peer: NetnsEnd;

describe('the real psample family', () => {
  const open = openPsampleForEachTest();
  beforeAll(() => {
    loadTcSampleModules();
    [sampled, peer] = createNetnsPair('ks', '10.78.0');
    addClsact(sampled);
  });
  afterAll(() => deleteNetns(sampled.netns, peer.netns));

  it('delivers NEW_GROUP / DEL_GROUP events with config: true', async () => {
    const socket = open({ netns: sampled.netns, config: true });
    const events: PsampleMessage[] = [];
    socket.on('group', (g) => events.push(g));
    addSampleFilter(sampled, { pref: 5, action: everyPacketTo(61) });
    deleteFilter(sampled, 'ingress', 5);
    await settle(500);
    expect(events.map((e) => [e.command, e.group])).toEqual([
      ['new-group', 61],
      ['del-group', 61],
    ]);
    // The kernel announces a new group from psample_group_create(), before taking the first
    // reference, and a deleted one after dropping the last: both carry refcount 0.
    expect(events.map((e) => e.groupRefcount)).toEqual([0, 0]);
  });

  it('rejects a userspace process posing as the kernel on the packets group, and counts it', async () => {
    const socket = open({ netns: sampled.netns, groups: [62] });
    const samples: PsampleMessage[] = [];
    socket.on('sample', (s) => samples.push(s));
    const impostor = createInjector({ protocol: 'generic', groupId: socket.groupId, netns: sampled.netns });
    impostor.send(encodePsample({ group: 62, groupSeq: 0, proto: 0x800 }, { familyId: socket.familyId }));
    impostor.close();
    addSampleFilter(sampled, { pref: 6, action: everyPacketTo(62) });
    await traffic(peer.netns, 'ping', ['-c', '2', '-i', '0.2', sampled.ip]);
    await settle(500);
    deleteFilter(sampled, 'ingress', 6);
    expect(socket.stats()).toMatchObject({ rejectedSender: 1, received: samples.length });
    expect(samples.length).toBeGreaterThanOrEqual(2);
    expect(samples.every((s) => s.iifindex > 0)).toBe(true);
  });
});
