import { afterEach, expect, it } from 'vitest';

import { createInjector, encodePsample, openPsample, type PsampleGapEvent, type PsampleSocket } from '../../src/index';
import { CTRL_CMD_DELFAMILY, CTRL_CMD_NEWFAMILY, controllerMessage } from '../support/controller';
import { fileNetns } from '../support/netns';
import { collectSamples, settle, waitFor } from '../support/receive';

// The injected source stands in for the kernel: samples on usersock group 11 with family id 34,
// and the controller's notifications on the same group, as nlctrl multicasts them when the
// psample module is unloaded and loaded again. The family comes back as id 35 on group 12.
const OLD = { family: 34, group: 11 };
const NEW = { family: 35, group: 12 };
const PSAMPLE_GROUP = 5;
const ns = fileNetns('ovnps-rejoin');
let socket: PsampleSocket | undefined;
afterEach(() => socket?.close());

function send(group: number, messages: Uint8Array[]): void {
  const injector = createInjector({ protocol: 'usersock', groupId: group, netns: ns.name });
  for (const message of messages) injector.send(message);
  injector.close();
}

const samples = (family: number, from: number, count: number, group = PSAMPLE_GROUP): Uint8Array[] =>
  Array.from({ length: count }, (_, i) => encodePsample({ group, groupSeq: from + i }, { familyId: family }));

it('follows the psample family when it registers again, through a group filter, and reports the gap', async () => {
  socket = openPsample({
    groups: [PSAMPLE_GROUP],
    netns: ns.name,
    source: { protocol: 'usersock', familyId: OLD.family, groupId: OLD.group },
  });
  const received = collectSamples(socket);
  const gaps: PsampleGapEvent[] = [];
  socket.on('gap', (gap) => gaps.push(gap));

  send(OLD.group, samples(OLD.family, 0, 10));
  send(OLD.group, [controllerMessage(CTRL_CMD_DELFAMILY, { name: 'psample', id: OLD.family, groups: { config: 13, packets: OLD.group } })]);
  await waitFor(() => gaps.length === 1, 10_000, 'the gap to start');
  send(OLD.group, [controllerMessage(CTRL_CMD_NEWFAMILY, { name: 'psample', id: NEW.family, groups: { config: 13, packets: NEW.group } })]);
  await waitFor(() => gaps.length === 2, 10_000, 'the socket to rejoin');

  // The new family's samples arrive, still filtered by group in the kernel; the old group is left.
  send(NEW.group, [...samples(NEW.family, 10, 10), ...samples(NEW.family, 99, 3, PSAMPLE_GROUP + 1)]);
  send(OLD.group, samples(OLD.family, 100, 5));
  await waitFor(() => received.length === 20, 10_000, '20 samples');
  await settle();

  expect(received.map((s) => s.groupSeq)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  expect(gaps[0]).toEqual({ phase: 'start', total: 1 });
  expect(gaps[1]).toMatchObject({ phase: 'end', total: 1, familyId: NEW.family, groupId: NEW.group });
  expect(gaps[1]!.durationMs).toBeGreaterThanOrEqual(0);
  expect([socket.familyId, socket.groupId]).toEqual([NEW.family, NEW.group]);
  expect(socket.stats()).toMatchObject({
    received: 20,
    familyGaps: 1,
    rejoins: 1,
    controlMessages: 2,
    datagrams: 22,
    filteredOut: 0,
    foreign: 0,
  });
});

it('rejoins on a registration whose unregistration it never saw, and counts that gap too', async () => {
  socket = openPsample({ netns: ns.name, source: { protocol: 'usersock', familyId: OLD.family, groupId: OLD.group } });
  const received = collectSamples(socket);
  const gaps: PsampleGapEvent[] = [];
  socket.on('gap', (gap) => gaps.push(gap));
  send(OLD.group, [controllerMessage(CTRL_CMD_NEWFAMILY, { name: 'psample', id: NEW.family, groups: { packets: NEW.group } })]);
  await waitFor(() => gaps.length === 2, 10_000, 'the gap to be reported');
  send(NEW.group, samples(NEW.family, 0, 3));
  await waitFor(() => received.length === 3, 10_000, '3 samples');
  expect(gaps).toEqual([
    { phase: 'start', total: 1 },
    { phase: 'end', total: 1, familyId: NEW.family, groupId: NEW.group, durationMs: undefined },
  ]);
  expect(socket.stats()).toMatchObject({ familyGaps: 1, rejoins: 1 });
});

it("ignores other families' registrations, and a duplicate of psample's own", async () => {
  socket = openPsample({ netns: ns.name, source: { protocol: 'usersock', familyId: OLD.family, groupId: OLD.group } });
  const received = collectSamples(socket);
  send(OLD.group, [
    controllerMessage(CTRL_CMD_DELFAMILY, { name: 'wireguard', id: 40, groups: {} }),
    controllerMessage(CTRL_CMD_NEWFAMILY, { name: 'wireguard', id: 41, groups: {} }),
    controllerMessage(CTRL_CMD_NEWFAMILY, { name: 'psample', id: OLD.family, groups: { packets: OLD.group } }),
    ...samples(OLD.family, 0, 2),
  ]);
  await waitFor(() => received.length === 2, 10_000, '2 samples');
  expect(socket.stats()).toMatchObject({ familyGaps: 0, rejoins: 0, controlMessages: 3, received: 2 });
});
