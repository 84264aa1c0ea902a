import { afterEach, expect, it } from 'vitest';

import { encodePsample, openPsample, type PsampleDropEvent, type PsampleSocket } from '../../src/index';
import { fileNetns } from '../support/netns';
import { collectSamples, settle, waitFor } from '../support/receive';
import { blockThread, sendFromWorker } from '../support/worker-sender';

const GROUP = 4;
const FAMILY = 34;
const ns = fileNetns('ovnps-loss');
let socket: PsampleSocket | undefined;
afterEach(() => socket?.close());

function burst(count: number, dataBytes = 150): Uint8Array[] {
  const data = new Uint8Array(dataBytes).fill(0xab);
  return Array.from({ length: count }, (_, i) =>
    encodePsample({ group: 1, groupSeq: i, proto: 0x800, data, userCookie: new Uint8Array(8) }, { familyId: FAMILY }),
  );
}

it('accounts for every message of a burst into a tiny receive buffer: received + drops == sent', async () => {
  socket = openPsample({ receiveBufferBytes: 4096, netns: ns.name, source: { protocol: 'usersock', familyId: FAMILY, groupId: GROUP } });
  const received = collectSamples(socket);
  const drops: PsampleDropEvent[] = [];
  socket.on('drop', (d) => drops.push(d));
  const accounted = (): number => {
    const s = socket!.stats();
    return s.received + s.kernelDrops + s.queueDrops;
  };
  // Whether the reader thread falls behind the sender depends on how the two get scheduled on
  // this busy machine: bursts go on until the buffer has overflowed once.
  let sent = 0;
  for (let burstCount = 0; burstCount < 5 && socket.stats().kernelDrops === 0; burstCount++) {
    sent += await sendFromWorker(ns.name, GROUP, burst(50_000));
    await waitFor(() => accounted() === sent, 20_000, 'received + drops == sent');
  }
  await settle();
  const stats = socket.stats();
  expect(stats.received + stats.kernelDrops + stats.queueDrops).toBe(sent);
  expect(received.length).toBe(stats.received);
  expect(stats.kernelDrops).toBeGreaterThan(0);
  // Every sample that did arrive is whole, and the drop events add up to the counter.
  expect(received.every((s) => s.data.byteLength === 150)).toBe(true);
  expect(drops.filter((d) => d.kind === 'kernel').reduce((n, d) => n + d.count, 0)).toBe(stats.kernelDrops);
});

it('counts queue drops when JavaScript does not keep up with a small queue', async () => {
  socket = openPsample({ queueCapacity: 100, netns: ns.name, source: { protocol: 'usersock', familyId: FAMILY, groupId: GROUP } });
  const sending = sendFromWorker(ns.name, GROUP, burst(5_000), 50);
  blockThread(500);
  const sent = await sending;
  await waitFor(() => {
    const s = socket!.stats();
    return s.received + s.kernelDrops + s.queueDrops === sent;
  });
  const stats = socket.stats();
  expect(stats.queueDrops).toBeGreaterThan(0);
  expect(stats.received + stats.kernelDrops + stats.queueDrops).toBe(sent);
});

it('loses nothing when the JavaScript thread is blocked for 500 ms during a burst that fits the default buffer', async () => {
  socket = openPsample({ netns: ns.name, source: { protocol: 'usersock', familyId: FAMILY, groupId: GROUP } });
  const received = collectSamples(socket);
  const sending = sendFromWorker(ns.name, GROUP, burst(20_000), 20);
  blockThread(500);
  const sent = await sending;
  await waitFor(() => received.length === sent, 20_000, 'all samples');
  expect(socket.stats()).toMatchObject({ received: sent, kernelDrops: 0, queueDrops: 0, malformed: 0 });
  expect(received.map((s) => s.groupSeq)).toEqual(Array.from({ length: sent }, (_, i) => i));
});
