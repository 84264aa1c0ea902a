import { afterEach, expect, it } from 'vitest';

import { encodePsample, openPsample, type PsampleDropEvent, type PsampleMessage, type PsampleSocket } from '../../src/index';
import { dist, runNodeScript } from '../support/child';
import { fileNetns } from '../support/netns';
import { settle, waitFor } from '../support/receive';
import { sendWhileBlocked } from '../support/worker-sender';

// What a listener may do to the socket that calls it: throw, or close the socket.
const GROUP = 8;
const FAMILY = 34;
const SENT = 3000;
const source = { protocol: 'usersock', familyId: FAMILY, groupId: GROUP } as const;
const ns = fileNetns('ovnps-listener');
let socket: PsampleSocket | undefined;
afterEach(() => socket?.close());

// A child process opens a socket in the test's namespace, sends SENT samples to itself, and has
// a listener throw on the 5th; it prints what it saw once all arrived (or after 10 s).
const throwingListener = (handleUncaught: boolean): string => `
  const { openPsample, createInjector, encodePsample } = require(${JSON.stringify(dist)});
  const source = ${JSON.stringify(source)};
  const errors = [];
  if (${handleUncaught}) process.on('uncaughtException', (error) => errors.push(error.message));
  const socket = openPsample({ netns: process.env.NETNS, source });
  const seen = [];
  const iterated = [];
  socket.on('sample', (sample) => {
    seen.push(sample.groupSeq);
    if (seen.length === 5) throw new Error('listener failed on purpose');
  });
  (async () => { for await (const sample of socket) iterated.push(sample.groupSeq); })();
  const injector = createInjector({ protocol: 'usersock', groupId: source.groupId, netns: process.env.NETNS });
  for (let i = 0; i < ${SENT}; i++) injector.send(encodePsample({ group: 1, groupSeq: i }, { familyId: source.familyId }));
  injector.close();
  const deadline = Date.now() + 10000;
  const check = setInterval(() => {
    if (iterated.length < ${SENT} && Date.now() < deadline) return;
    clearInterval(check);
    process.stdout.write(JSON.stringify({ errors, seen, iterated, stats: socket.stats() }));
    socket.close();
  }, 10);
`;

const inOrder = (count: number): number[] => Array.from({ length: count }, (_, i) => i);

it('a throwing listener: the error reaches uncaughtException and every other sample is still delivered, in order', async () => {
  const child = await runNodeScript(throwingListener(true), { NETNS: ns.name });
  expect(child.status, child.stderr).toBe(0);
  const out = JSON.parse(child.stdout) as { errors: string[]; seen: number[]; iterated: number[]; stats: { received: number } };
  expect(out.errors).toEqual(['listener failed on purpose']);
  expect(out.seen).toEqual(inOrder(SENT));
  expect(out.iterated).toEqual(inOrder(SENT));
  expect(out.stats.received).toBe(SENT);
  expect(child.stderr).not.toMatch(/DEP0168/);
});

it('a throwing listener with no uncaughtException handler ends the process with the error, as any EventEmitter source would', async () => {
  const child = await runNodeScript(throwingListener(false), { NETNS: ns.name });
  expect(child.status).toBe(1);
  expect(child.stderr).toMatch(/Error: listener failed on purpose/);
  expect(child.stdout).toBe('');
});

it('close() from a listener: no sample after it, the earlier ones in order, and every other one counted', async () => {
  socket = openPsample({ netns: ns.name, source });
  const seen: number[] = [];
  const drops: PsampleDropEvent[] = [];
  let closes = 0;
  socket.on('drop', (drop) => drops.push(drop));
  socket.on('close', () => closes++);
  socket.on('sample', (sample: PsampleMessage) => {
    seen.push(sample.groupSeq);
    if (seen.length === 100) socket!.close();
  });
  // The burst is sent while this thread is blocked, to the last message, so it waits in the socket
  // and in the reader's queue, and the listener closes the socket in the middle of a batch. (A
  // sender still running after the close would multicast to a socket that left the group: nobody's
  // count.)
  const messages = Array.from({ length: SENT }, (_, i) => encodePsample({ group: 1, groupSeq: i }, { familyId: FAMILY }));
  const { sent } = sendWhileBlocked(ns.name, GROUP, messages);
  await waitFor(() => socket!.closed, 10_000, 'the listener to close the socket');
  await settle();

  expect(seen).toEqual(inOrder(100));
  const stats = socket.stats();
  expect(stats.received).toBe(100);
  expect(stats.closeDiscards).toBeGreaterThan(0);
  expect(stats.received + stats.closeDiscards + stats.kernelDrops + stats.queueDrops).toBe(sent);
  expect(drops.filter((d) => d.kind === 'close')).toEqual([{ kind: 'close', count: stats.closeDiscards, total: stats.closeDiscards }]);
  expect(closes).toBe(1);
});
