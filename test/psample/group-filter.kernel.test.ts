import { afterEach, expect, it } from 'vitest';

import { createInjector, encodePsample, openPsample, type PsampleSocket } from '../../src/index';
import { fileNetns } from '../support/netns';
import { collectSamples, settle, waitFor } from '../support/receive';

const GROUP = 3;
const FAMILY = 34;
const ns = fileNetns('ovnps-filter');
let socket: PsampleSocket | undefined;
afterEach(() => socket?.close());

it('keeps other psample groups out of the socket in the kernel (BPF on SAMPLE_GROUP)', async () => {
  socket = openPsample({ groups: [7, 70000], netns: ns.name, source: { protocol: 'usersock', familyId: FAMILY, groupId: GROUP } });
  expect(socket.kernelFilter).toBe(true);
  const received = collectSamples(socket);
  const injector = createInjector({ protocol: 'usersock', groupId: GROUP, netns: ns.name });
  for (let i = 0; i < 300; i++) {
    const group = [7, 8, 70000, 9][i % 4];
    injector.send(encodePsample({ group, groupSeq: i, proto: 0x800 }, { familyId: FAMILY }));
  }
  injector.close();
  await waitFor(() => received.length === 150, 10_000, '150 samples of groups 7 and 70000');
  await settle();
  expect(received.map((s) => s.group).every((g) => g === 7 || g === 70000)).toBe(true);
  // The other 150 never reached userspace: not read, not counted as filtered there.
  expect(socket.stats()).toMatchObject({ received: 150, datagrams: 150, filteredOut: 0, kernelDrops: 0 });
});

it('lets messages without a SAMPLE_GROUP through for userspace to judge', async () => {
  socket = openPsample({ groups: [7], netns: ns.name, source: { protocol: 'usersock', familyId: FAMILY, groupId: GROUP } });
  const injector = createInjector({ protocol: 'usersock', groupId: GROUP, netns: ns.name });
  const groupless = encodePsample({ group: 7 }, { familyId: FAMILY }).slice(0, 20);
  new DataView(groupless.buffer).setUint32(0, 20, true);
  injector.send(groupless);
  injector.close();
  await waitFor(() => socket!.stats().datagrams === 1);
  expect(socket.stats()).toMatchObject({ datagrams: 1, malformed: 1, received: 0 });
});

it('judges each message of a datagram the kernel filter left to userspace (several messages in one)', async () => {
  socket = openPsample({ groups: [7], netns: ns.name, source: { protocol: 'usersock', familyId: FAMILY, groupId: GROUP } });
  const received = collectSamples(socket);
  const injector = createInjector({ protocol: 'usersock', groupId: GROUP, netns: ns.name });
  const wantedFirst = [7, 8, 7].map((group, seq) => encodePsample({ group, groupSeq: seq }, { familyId: FAMILY }));
  const unwantedFirst = [8, 7].map((group, seq) => encodePsample({ group, groupSeq: 10 + seq }, { familyId: FAMILY }));
  injector.send(Buffer.concat(wantedFirst));
  injector.send(Buffer.concat(unwantedFirst));
  injector.close();
  await waitFor(() => socket!.stats().datagrams === 2);
  await settle();
  expect(received.map((s) => [s.group, s.groupSeq])).toEqual([
    [7, 0],
    [7, 2],
    [7, 11],
  ]);
  expect(socket.stats()).toMatchObject({ datagrams: 2, received: 3, filteredOut: 2 });
});
