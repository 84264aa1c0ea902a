import { afterEach, expect, it } from 'vitest';

import { createInjector, encodePsample, openPsample, type PsampleBatch, type PsampleDropEvent, type PsampleSocket } from '../../src/index';
import { dist, runNodeScript } from '../support/child';
import { fileNetns } from '../support/netns';
import { settle, waitFor } from '../support/receive';
import { blockThread, sendFromWorker, sendWhileBlocked } from '../support/worker-sender';

// The `batch` event: what the reader thread hands over at once, for consumers that process in bulk.
const GROUP = 11;
const FAMILY = 34;
const source = { protocol: 'usersock', familyId: FAMILY, groupId: GROUP } as const;
const ns = fileNetns('ovnps-batch');
let socket: PsampleSocket | undefined;
afterEach(() => socket?.close());

const burst = (count: number, dataBytes = 64): Uint8Array[] =>
  Array.from({ length: count }, (_, i) =>
    encodePsample({ group: 1, groupSeq: i, proto: 0x800, data: new Uint8Array(dataBytes).fill(i & 0xff) }, { familyId: FAMILY }),
  );
const inOrder = (count: number): number[] => Array.from({ length: count }, (_, i) => i);

it('a burst comes in batches that hold many samples each, every sample once, in order, each batch at most 64 KiB plus one message', async () => {
  socket = openPsample({ netns: ns.name, source });
  const seqs: number[] = [];
  const sizes: number[] = [];
  let batches = 0;
  socket.on('batch', (batch: PsampleBatch) => {
    batches++;
    for (const sample of batch) {
      seqs.push(sample.groupSeq);
      sizes.push(sample.data.buffer.byteLength);
      expect(sample.data.every((byte) => byte === (sample.groupSeq & 0xff))).toBe(true);
    }
  });
  const sent = await sendFromWorker(ns.name, GROUP, burst(5_000, 1_000));
  await waitFor(() => seqs.length === sent, 10_000, 'all samples');
  expect(seqs).toEqual(inOrder(sent));
  expect(batches).toBeLessThan(sent / 10);
  // a message here is a 88-byte record and its 1,000 data bytes, padded to 8
  expect(Math.max(...sizes)).toBeLessThanOrEqual(64 * 1024 + 1096);
  expect(socket.stats()).toMatchObject({ received: sent, kernelDrops: 0, queueDrops: 0 });
});

it('deliveryIntervalMs: samples that keep coming are handed over once per interval, not sooner, every sample once, in order', async () => {
  const intervalMs = 100;
  socket = openPsample({ netns: ns.name, source, deliveryIntervalMs: intervalMs });
  const seqs: number[] = [];
  let batches = 0;
  socket.on('batch', (batch) => {
    batches++;
    for (const sample of batch) seqs.push(sample.groupSeq);
  });
  const injector = createInjector({ protocol: 'usersock', groupId: GROUP, netns: ns.name });
  const messages = burst(400);
  const started = performance.now();
  for (let i = 0; i < messages.length; i += 10) {
    for (const message of messages.slice(i, i + 10)) injector.send(message);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  injector.close();
  await waitFor(() => seqs.length === messages.length, 10_000, 'all samples');
  const elapsedMs = performance.now() - started;
  expect(seqs).toEqual(inOrder(messages.length));
  // One hand-off per interval while they flow, and one for what the last interval gathered.
  expect(batches).toBeLessThanOrEqual(Math.ceil(elapsedMs / intervalMs) + 1);
});

it('deliveryIntervalMs must be a whole number of milliseconds from 1 to 1000', () => {
  for (const deliveryIntervalMs of [0, 1001, 2.5, Number.NaN]) {
    expect(() => openPsample({ netns: ns.name, source, deliveryIntervalMs })).toThrow(
      expect.objectContaining({
        code: 'INVALID_OPTION',
        message: expect.stringContaining('deliveryIntervalMs must be an integer from 1 to 1000'),
      }),
    );
  }
});

it('a backlog is delivered a few batches per turn of the event loop: what waits for a turn (a signal, a timer) runs before its end, nothing is lost', async () => {
  socket = openPsample({ netns: ns.name, source });
  let delivered = 0;
  let deliveredWhenATurnCame: number | undefined;
  socket.on('batch', (batch) => {
    if (delivered === 0) setImmediate(() => (deliveredWhenATurnCame = delivered));
    delivered += batch.length;
    blockThread(2); // a slow consumer: the backlog takes longer than a turn's budget
  });
  const { sent } = sendWhileBlocked(ns.name, GROUP, burst(20_000));
  // Still without a turn of the event loop: the whole backlog reaches the reader's queue first.
  for (const limit = Date.now() + 10_000; socket.stats().queued < sent && Date.now() < limit;) blockThread(5);
  expect(socket.stats().queued).toBe(sent);
  await waitFor(() => delivered === sent, 20_000, 'all samples');
  expect(deliveredWhenATurnCame).toBeGreaterThan(0);
  expect(deliveredWhenATurnCame).toBeLessThan(sent);
  expect(socket.stats()).toMatchObject({ received: sent, kernelDrops: 0, queueDrops: 0, closeDiscards: 0 });
});

it('batch comes before its samples one by one, to listeners and iterators alike', async () => {
  socket = openPsample({ netns: ns.name, source });
  const events: string[] = [];
  socket.on('batch', (batch) => events.push(`batch ${[...batch].map((s) => s.groupSeq).join(',')}`));
  socket.on('sample', (sample) => events.push(`sample ${sample.groupSeq}`));
  const iterated: number[] = [];
  void (async () => {
    for await (const sample of socket) iterated.push(sample.groupSeq);
  })();
  const sent = await sendFromWorker(ns.name, GROUP, burst(300));
  await waitFor(() => iterated.length === sent, 10_000, 'all samples');
  const expected: string[] = [];
  let next = 0;
  for (const event of events.filter((e) => e.startsWith('batch'))) {
    const seqs = event.slice('batch '.length).split(',').map(Number);
    expected.push(event, ...seqs.map((seq) => `sample ${seq}`));
    expect(seqs[0]).toBe(next);
    next += seqs.length;
  }
  expect(events).toEqual(expected);
  expect(iterated).toEqual(inOrder(sent));
  expect(socket.stats().received).toBe(sent);
});

it('close() from a batch listener: that batch counts as received, nothing is emitted after, the rest is counted', async () => {
  socket = openPsample({ netns: ns.name, source });
  let batches = 0;
  let seen = 0;
  let samplesAfterClose = 0;
  const drops: PsampleDropEvent[] = [];
  socket.on('drop', (drop) => drops.push(drop));
  socket.on('sample', () => {
    if (socket!.closed) samplesAfterClose++;
  });
  socket.on('batch', (batch) => {
    batches++;
    seen += batch.length;
    if (batches === 2) socket!.close();
  });
  // Sent while this thread is blocked, to the last message: the burst waits in the socket and in
  // the reader's queue, several batches of it, before the listener can close the socket. (A sender
  // still running after the close would multicast to a socket that left the group: nobody's count.)
  const { sent } = sendWhileBlocked(ns.name, GROUP, burst(3_000));
  await waitFor(() => socket!.closed, 10_000, 'the listener to close the socket');
  await settle();
  const stats = socket.stats();
  expect(batches).toBe(2);
  expect(samplesAfterClose).toBe(0);
  expect(stats.received).toBe(seen);
  expect(stats.received + stats.closeDiscards + stats.kernelDrops + stats.queueDrops).toBe(sent);
  expect(drops.filter((d) => d.kind === 'close')).toEqual([{ kind: 'close', count: stats.closeDiscards, total: stats.closeDiscards }]);
});

it('a throwing batch listener: the error reaches uncaughtException, its batch still goes to the sample listeners, later batches follow', async () => {
  const child = await runNodeScript(
    `
    const { openPsample, createInjector, encodePsample } = require(${JSON.stringify(dist)});
    const source = ${JSON.stringify(source)};
    const errors = [];
    process.on('uncaughtException', (error) => errors.push(error.message));
    const socket = openPsample({ netns: process.env.NETNS, source });
    let batches = 0;
    const batched = [];
    const seen = [];
    socket.on('batch', (batch) => {
      for (const sample of batch) batched.push(sample.groupSeq);
      if (++batches === 1) throw new Error('batch listener failed on purpose');
    });
    socket.on('sample', (sample) => seen.push(sample.groupSeq));
    const injector = createInjector({ protocol: 'usersock', groupId: source.groupId, netns: process.env.NETNS });
    for (let i = 0; i < 2000; i++) injector.send(encodePsample({ group: 1, groupSeq: i }, { familyId: source.familyId }));
    injector.close();
    const deadline = Date.now() + 10000;
    const check = setInterval(() => {
      if (seen.length < 2000 && Date.now() < deadline) return;
      clearInterval(check);
      process.stdout.write(JSON.stringify({ errors, batched, seen, received: socket.stats().received }));
      socket.close();
    }, 10);
    `,
    { NETNS: ns.name },
  );
  expect(child.status, child.stderr).toBe(0);
  const out = JSON.parse(child.stdout) as { errors: string[]; batched: number[]; seen: number[]; received: number };
  expect(out.errors).toEqual(['batch listener failed on purpose']);
  expect(out.batched).toEqual(inOrder(2000));
  expect(out.seen).toEqual(inOrder(2000));
  expect(out.received).toBe(2000);
});
