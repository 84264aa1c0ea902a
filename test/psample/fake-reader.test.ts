import { afterEach, expect, it } from 'vitest';

import { openFakePsample, type PsampleBatch, type PsampleDropEvent, type PsampleMessage, type PsampleSocket } from '../../src/index';
import { NetworkEventAssembler } from '../../src/events/event-assembler';
import { NativeFlows } from '../../src/events/native-flows';
import { dist, runNodeScript } from '../support/child';
import { waitFor } from '../support/receive';

// Delivery and backpressure of PsampleSocket with the fake reader: the socket's own logic, fast
// and without root. The same contracts are tested against the kernel in *.kernel.test.ts.
let socket: PsampleSocket | undefined;
afterEach(() => socket?.close());

const burst = (count: number, from = 0): Partial<PsampleMessage>[] =>
  Array.from({ length: count }, (_, i) => ({
    group: 1,
    groupSeq: from + i,
    proto: 0x800,
    data: new Uint8Array(64).fill((from + i) & 0xff),
  }));
const inOrder = (count: number): number[] => Array.from({ length: count }, (_, i) => i);

it('hands over batches, then their samples: every sample once, in order, counted as received', async () => {
  const fake = openFakePsample();
  socket = fake.socket;
  const batched: number[] = [];
  const sampled: number[] = [];
  socket.on('batch', (batch) => {
    for (const sample of batch) batched.push(sample.groupSeq);
  });
  socket.on('sample', (sample) => {
    sampled.push(sample.groupSeq);
    expect(sample.data.every((byte) => byte === (sample.groupSeq & 0xff))).toBe(true);
  });
  fake.reader.deliver(burst(5_000));
  await waitFor(() => sampled.length === 5_000, 10_000, 'all samples');
  expect(batched).toEqual(inOrder(5_000));
  expect(sampled).toEqual(inOrder(5_000));
  expect(socket.stats()).toMatchObject({ received: 5_000, kernelDrops: 0, queueDrops: 0, queued: 0 });
});

it('keeps only the groups asked for, and counts the others as filtered out', async () => {
  const fake = openFakePsample({ groups: [7] });
  socket = fake.socket;
  const groups: number[] = [];
  socket.on('sample', (sample) => groups.push(sample.group));
  fake.reader.deliver([{ group: 7 }, { group: 8 }, { group: 7 }]);
  await waitFor(() => groups.length === 2);
  expect(groups).toEqual([7, 7]);
  expect(socket.stats()).toMatchObject({ received: 2, filteredOut: 1 });
});

it("counts what the reader's queue had no room for as queue drops, and says so in a 'drop' event", async () => {
  const fake = openFakePsample({ queueCapacity: 100 });
  socket = fake.socket;
  const drops: PsampleDropEvent[] = [];
  let received = 0;
  socket.on('drop', (drop) => drops.push(drop));
  socket.on('sample', () => received++);
  fake.reader.deliver(burst(250));
  fake.reader.dropInKernel(7);
  await waitFor(() => drops.length === 2);
  expect(received).toBe(100);
  expect(drops).toEqual([
    { kind: 'kernel', count: 7, total: 7 },
    { kind: 'queue', count: 150, total: 150 },
  ]);
});

it('close() from a listener in the middle of a batch: no sample after it, the rest counted as discarded at close', async () => {
  const fake = openFakePsample();
  socket = fake.socket;
  const seen: number[] = [];
  const drops: PsampleDropEvent[] = [];
  socket.on('drop', (drop) => drops.push(drop));
  socket.on('sample', (sample) => {
    seen.push(sample.groupSeq);
    if (seen.length === 100) socket!.close();
  });
  fake.reader.deliver(burst(3_000));
  fake.reader.deliver(burst(1_000, 3_000));
  await waitFor(() => socket!.closed);
  await new Promise((resolve) => setImmediate(resolve));
  expect(seen).toEqual(inOrder(100));
  const stats = socket.stats();
  expect(stats.received).toBe(100);
  expect(stats.received + stats.closeDiscards).toBe(4_000);
  expect(drops).toEqual([{ kind: 'close', count: 3_900, total: 3_900 }]);
  expect(fake.reader.closed).toBe(true);
});

it('a slow iterator holds delivery back for everyone: the queue fills, then counts drops; nothing else is lost, order is kept', async () => {
  const fake = openFakePsample({ queueCapacity: 100_000 });
  socket = fake.socket;
  const iterator = socket[Symbol.asyncIterator]();
  const listened: number[] = [];
  socket.on('sample', (sample) => listened.push(sample.groupSeq));
  // More than an iterator may hold unread (65,536): once it does, delivery pauses for everyone.
  fake.reader.deliver(burst(80_000));
  await waitFor(() => listened.length > 65_536);
  for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
  const before = listened.length;
  // Paused: the reader's queue takes what comes while it has room, then counts queue drops.
  fake.reader.deliver(burst(50_000, 80_000));
  fake.reader.deliver(burst(60_000, 130_000));
  for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
  expect(listened.length).toBe(before);
  expect(socket.stats().queueDrops).toBe(10_000);
  const seen: number[] = [];
  while (seen.length < 180_000) {
    const { value } = (await iterator.next()) as IteratorResult<PsampleMessage>;
    seen.push(value.groupSeq);
  }
  expect(seen).toEqual(inOrder(180_000));
  await waitFor(() => listened.length === 180_000);
  expect(listened).toEqual(seen);
  expect(socket.stats()).toMatchObject({ received: 180_000, queueDrops: 10_000 });
});

it('a reader that fails closes the socket with a typed error', async () => {
  const fake = openFakePsample();
  socket = fake.socket;
  const errors: Error[] = [];
  socket.on('error', (error) => errors.push(error));
  fake.reader.fail(5);
  await waitFor(() => errors.length === 1);
  expect(errors[0]).toMatchObject({ code: 'SOCKET_ERROR', message: expect.stringContaining('EIO') });
  expect(socket.closed).toBe(true);
});

it('refuses dropPrivileges: a fake reader has no socket to give privileges up for', () => {
  expect(() => openFakePsample({ dropPrivileges: true } as never)).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
});

/**
 * Runs `listen` (it pushes each sample's groupSeq to `seen`; `socket`, `reader` and
 * `send(from, count)` are in scope) and `deliver` in a child with the fake reader until `total`
 * samples were seen: what reached uncaughtException, what was seen in order, what was counted.
 */
async function withUncaughtErrors(listen: string, deliver: string, total: number): Promise<void> {
  const child = await runNodeScript(`
    const { openFakePsample } = require(${JSON.stringify(dist)});
    const errors = [];
    process.on('uncaughtException', (error) => errors.push(error.message));
    const { socket, reader } = openFakePsample();
    const seen = [];
    const send = (from, count) => reader.deliver(Array.from({ length: count }, (_, i) => ({ group: 1, groupSeq: from + i })));
    ${listen}
    ${deliver}
    const check = setInterval(() => {
      if (seen.length < ${total}) return;
      clearInterval(check);
      process.stdout.write(JSON.stringify({ errors, seen, received: socket.stats().received }));
      socket.close();
    }, 5);
  `);
  expect(child.status, child.stderr).toBe(0);
  const out = JSON.parse(child.stdout) as { errors: string[]; seen: number[]; received: number };
  expect(out.errors).toEqual(['listener failed on purpose']);
  expect(out.seen).toEqual(inOrder(total));
  expect(out.received).toBe(total);
}

it('a throwing listener: the error reaches uncaughtException and every other sample is still delivered, in order', async () => {
  await withUncaughtErrors(
    `socket.on('sample', (sample) => {
      seen.push(sample.groupSeq);
      if (seen.length === 5) throw new Error('listener failed on purpose');
    });`,
    'send(0, 3000);',
    3000,
  );
});

it('a batch listener that releases its batch and then throws: the error reaches uncaughtException, the next batches still come whole and every sample is counted', async () => {
  await withUncaughtErrors(
    `let batches = 0;
    socket.on('batch', (batch) => {
      for (const sample of batch) seen.push(sample.groupSeq);
      batch.release();
      if (++batches === 1) throw new Error('listener failed on purpose');
    });`,
    'send(0, 3); setTimeout(() => send(3, 2), 20);',
    5,
  );
});

it("feeds watch --aggregate's native flows as the reader thread does: no event, every sample in a flow or counted", async () => {
  const fake = openFakePsample();
  socket = fake.socket;
  let events = 0;
  socket.on('sample', () => events++);
  let samples = 0;
  const flows: NativeFlows = new NativeFlows({
    assembler: new NetworkEventAssembler({ groupWindowMs: 0 }),
    groupWindowMs: 0,
    maxFlows: 100,
    bySourcePort: false,
    due: () => flows.drain(false, false, (_flow, counts) => (samples += counts.samples)),
  });
  try {
    fake.reader.deliver(burst(10));
    flows.readFrom(socket);
    // What the socket had not taken yet goes to the table first, then what comes after.
    fake.reader.deliver(burst(20, 10));
    flows.drain(true, false, (_flow, counts) => (samples += counts.samples));
    expect(samples).toBe(30);
    expect(socket.stats()).toMatchObject({ received: 30, queued: 0, closeDiscards: 0 });
    flows.close();
    fake.reader.deliver(burst(5, 30));
    expect(socket.stats()).toMatchObject({ received: 30, closeDiscards: 5 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toBe(0);
  } finally {
    flows.close();
  }
});

it("release() in a 'batch' listener frees the batch's bytes at once: its samples cannot be read after it, the next batches still come and are counted", async () => {
  const fake = openFakePsample();
  socket = fake.socket;
  const seen: number[] = [];
  const released: PsampleBatch[] = [];
  socket.on('batch', (batch) => {
    for (const sample of batch) seen.push(sample.groupSeq);
    const kept = batch.at(0)!;
    batch.release();
    released.push(batch);
    expect(batch.buffer.byteLength).toBe(0);
    expect(() => kept.groupSeq).toThrow(TypeError);
    expect(() => batch.at(0)!.groupSeq).toThrow(TypeError);
  });
  fake.reader.deliver(burst(3));
  await waitFor(() => seen.length === 3);
  fake.reader.deliver(burst(2, 3));
  await waitFor(() => seen.length === 5);
  expect(seen).toEqual(inOrder(5));
  expect(released.length).toBeGreaterThanOrEqual(2);
  expect(socket.stats()).toMatchObject({ received: 5, queued: 0 });
});

it('a batch listener that releases its batch and closes the socket: the close counts nothing twice and nothing reads the released bytes', () => {
  const fake = openFakePsample();
  socket = fake.socket;
  const closing = socket;
  let seen = 0;
  return new Promise<void>((resolve) => {
    closing.on('batch', (batch) => {
      seen += batch.length;
      batch.release();
      closing.close();
    });
    closing.on('close', () => {
      expect(seen).toBe(4);
      expect(closing.stats()).toMatchObject({ received: 4, queued: 0 });
      resolve();
    });
    fake.reader.deliver(burst(4));
  });
});
