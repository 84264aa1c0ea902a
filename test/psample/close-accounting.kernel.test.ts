import { readdirSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { afterEach, expect, it } from 'vitest';

import { encodePsample, openPsample, type PsampleDropEvent, type PsampleSocket } from '../../src/index';
import { dist } from '../support/child';
import { fileNetns } from '../support/netns';
import { settle, waitFor } from '../support/receive';
import { sendWhileBlocked } from '../support/worker-sender';

// close() under traffic: whatever was sent to the socket is delivered or counted, exactly.
const GROUP = 9;
const FAMILY = 34;
const source = { protocol: 'usersock', familyId: FAMILY, groupId: GROUP } as const;
const ns = fileNetns('ovnps-close');
let socket: PsampleSocket | undefined;
afterEach(() => socket?.close());

const burst = (count: number): Uint8Array[] =>
  Array.from({ length: count }, (_, i) =>
    encodePsample({ group: 1, groupSeq: i, proto: 0x800, data: new Uint8Array(64) }, { familyId: FAMILY }),
  );
const threads = (): number => readdirSync('/proc/self/task').length;
const openFds = (): number => readdirSync('/proc/self/fd').length;

function accounted(s: PsampleSocket): number {
  const stats = s.stats();
  return stats.received + stats.closeDiscards + stats.kernelDrops + stats.queueDrops;
}

it('close() with a backlog nothing was delivered from: all of it is counted, in the socket and in the queue', () => {
  socket = openPsample({ netns: ns.name, source });
  const { sent } = sendWhileBlocked(ns.name, GROUP, burst(30_000));
  socket.close();
  const stats = socket.stats();
  expect(stats.received).toBe(0);
  expect(stats.closeDiscards).toBeGreaterThan(0);
  expect(accounted(socket)).toBe(sent);
});

it('close() while the reader thread is still draining a backlog: received + every counter == sent', async () => {
  socket = openPsample({ netns: ns.name, source });
  let received = 0;
  socket.on('sample', () => received++);
  const drops: PsampleDropEvent[] = [];
  socket.on('drop', (drop) => drops.push(drop));
  const { sent } = sendWhileBlocked(ns.name, GROUP, burst(30_000));
  await waitFor(() => received > 0, 10_000, 'the first samples');
  socket.close();
  const stats = socket.stats();
  expect(stats.received).toBe(received);
  expect(accounted(socket)).toBe(sent);
  expect(drops.reduce((n, d) => n + d.count, 0)).toBe(stats.closeDiscards + stats.kernelDrops + stats.queueDrops);
  await settle();
  expect(socket.stats()).toEqual(stats);
});

it('a listener throwing while the socket closes leaves no reader thread or descriptor behind', async () => {
  await settle(); // the sender threads of the tests before are gone
  const tasks = threads();
  const fds = openFds();
  socket = openPsample({ netns: ns.name, source });
  socket.on('sample', () => {
    throw new Error('sample listener failed on purpose');
  });
  socket.on('close', () => {
    throw new Error('close listener failed on purpose');
  });
  const { exited } = sendWhileBlocked(ns.name, GROUP, burst(1000));
  expect(() => socket!.close()).toThrow('close listener failed on purpose');
  expect(socket.closed).toBe(true);
  await exited;
  expect(threads()).toBe(tasks);
  expect(openFds()).toBe(fds);
});

it('close() during a flood that goes on: every message the socket read is delivered or counted', async () => {
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const flood = new Worker(
    `const { workerData } = require('node:worker_threads');
     const { createInjector, encodePsample } = require(workerData.dist);
     const injector = createInjector({ protocol: 'usersock', groupId: workerData.group, netns: workerData.netns });
     const message = encodePsample({ group: 1, data: new Uint8Array(100) }, { familyId: workerData.family });
     while (Atomics.load(workerData.stop, 0) === 0) for (let i = 0; i < 100; i++) injector.send(message);`,
    { eval: true, workerData: { dist, group: GROUP, family: FAMILY, netns: ns.name, stop } },
  );
  try {
    for (let round = 0; round < 5; round++) {
      socket = openPsample({ netns: ns.name, source });
      let received = 0;
      socket.on('sample', () => {
        if (++received === 10_000) socket!.close();
      });
      await waitFor(() => socket!.closed, 20_000, 'the listener to close the socket');
      const stats = socket.stats();
      expect(stats.received).toBe(10_000);
      // The flood is still on: what the kernel sent after the socket left its group is not the
      // socket's; what it read (datagrams: one message each) is all accounted for.
      expect(stats.datagrams).toBe(stats.received + stats.closeDiscards + stats.queueDrops);
    }
  } finally {
    Atomics.store(stop, 0, 1);
    await flood.terminate();
  }
});
