import { expect, it } from 'vitest';

import { createInjector, encodePsample, openPsample, type PsampleMessage } from '../../src/index';
import { fileNetns } from '../support/netns';
import { waitFor } from '../support/receive';

const GROUP = 10;
const FAMILY = 34;
const source = { protocol: 'usersock', familyId: FAMILY, groupId: GROUP } as const;
const ns = fileNetns('ovnps-iteration');

function send(count: number, from = 0): void {
  const injector = createInjector({ protocol: 'usersock', groupId: GROUP, netns: ns.name });
  for (let i = from; i < from + count; i++) injector.send(encodePsample({ group: 1, groupSeq: i }, { familyId: FAMILY }));
  injector.close();
}

it('is an async iterable: samples arrive in order and break closes nothing else', async () => {
  const socket = openPsample({ netns: ns.name, source });
  send(5);
  const seen: number[] = [];
  for await (const sample of socket) {
    seen.push(sample.groupSeq);
    if (seen.length === 5) break;
  }
  expect(seen).toEqual([0, 1, 2, 3, 4]);
  expect(socket.closed).toBe(false);
  socket.close();
});

it('holds a slow iterator back without losing samples: the reader queue absorbs the burst', async () => {
  const socket = openPsample({ netns: ns.name, source });
  const iterator = socket[Symbol.asyncIterator]();
  send(100_000);
  const seen: number[] = [];
  while (seen.length < 100_000) {
    const { value } = (await iterator.next()) as IteratorResult<PsampleMessage>;
    seen.push(value.groupSeq);
    if (seen.length % 1000 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  expect(seen[99_999]).toBe(99_999);
  expect(socket.stats()).toMatchObject({ received: 100_000, kernelDrops: 0, queueDrops: 0 });
  socket.close();
});

it('closes on AbortSignal and ends the iteration', async () => {
  const controller = new AbortController();
  const socket = openPsample({ netns: ns.name, source, signal: controller.signal });
  const done = (async () => {
    const seen: number[] = [];
    for await (const sample of socket) seen.push(sample.groupSeq);
    return seen;
  })();
  send(2);
  await waitFor(() => socket.stats().received === 2);
  controller.abort();
  expect(await done).toEqual([0, 1]);
  expect(socket.closed).toBe(true);
});

it('closes through Symbol.asyncDispose', async () => {
  const socket = openPsample({ netns: ns.name, source });
  await socket[Symbol.asyncDispose]();
  expect(socket.closed).toBe(true);
  const iterator = socket[Symbol.asyncIterator]();
  expect(await iterator.next()).toEqual({ value: undefined, done: true });
});
