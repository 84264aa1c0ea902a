import { Worker } from 'node:worker_threads';
import { afterEach, expect, it } from 'vitest';

import { NetworkEventAssembler } from '../../src/events/event-assembler';
import { NativeFlows, type NativeFlowCounts } from '../../src/events/native-flows';
import { encodePsample, openPsample, type PsampleDropEvent, type PsampleGapEvent, type PsampleSocket } from '../../src/index';
import { CTRL_CMD_DELFAMILY, CTRL_CMD_NEWFAMILY, controllerMessage } from '../support/controller';
import { dist } from '../support/child';
import { fileNetns } from '../support/netns';
import { settle, waitFor } from '../support/receive';
import { sendWhileBlocked } from '../support/worker-sender';

// watch --aggregate's native flows fed by the socket's reader thread (NativeFlows.readFrom): the
// reader adds each batch to the table where it reads it; every sample is in a drained flow or
// counted by the socket, whatever happens to the socket, the table or the family meanwhile.
const GROUP = 13;
const FAMILY = 34;
const source = { protocol: 'usersock', familyId: FAMILY, groupId: GROUP } as const;
const ns = fileNetns('ovnps-fed');
let socket: PsampleSocket | undefined;
let flows: NativeFlows | undefined;
afterEach(() => {
  socket?.close();
  flows?.close();
});

// Each its own packet (its own bytes), one flow for all (same addresses and protocol).
const burst = (count: number, from = 0, family = FAMILY): Uint8Array[] =>
  Array.from({ length: count }, (_, i) => {
    const data = new Uint8Array(64);
    data[0] = 0x45;
    new DataView(data.buffer).setUint32(60, from + i);
    return encodePsample({ group: 1, groupSeq: from + i, proto: 0x800, data, userCookie: new Uint8Array(8) }, { familyId: family });
  });

/** Fed flows with a drain that sums what it hands on. */
function fed(
  s: PsampleSocket,
  drainEveryMs = 50,
): { flows: NativeFlows; drained: { samples: number; sampledPackets: number }; final: () => void } {
  const drained = { samples: 0, sampledPackets: 0 };
  const visit = (_flow: unknown, c: NativeFlowCounts): void => {
    drained.samples += c.samples;
    drained.sampledPackets += c.sampledPackets;
  };
  const table: NativeFlows = new NativeFlows({
    assembler: new NetworkEventAssembler({ groupWindowMs: 0 }),
    groupWindowMs: 0,
    maxFlows: 1000,
    bySourcePort: false,
    due: () => table.drain(false, false, visit),
    drainEveryMs,
  });
  s.on('batch', (batch) => table.add(batch));
  table.readFrom(s);
  return { flows: table, drained, final: () => void table.drain(true, true, visit) };
}

it('a fed table: every sample is in a drained flow, none is delivered as an event, received counts them', async () => {
  socket = openPsample({ netns: ns.name, source });
  let events = 0;
  socket.on('sample', () => events++);
  const run = fed(socket);
  flows = run.flows;
  const { sent } = sendWhileBlocked(ns.name, GROUP, burst(5_000));
  await waitFor(() => run.drained.samples === sent, 10_000, 'the drains to hand on every sample');
  expect(socket.stats()).toMatchObject({ received: sent, kernelDrops: 0, queueDrops: 0, queued: 0 });
  expect(run.drained.sampledPackets).toBe(sent);
  expect(events).toBe(0);
});

it('a burst into a tiny receive buffer: the kernel drops are counted and reported, received + drops == sent == the flows', async () => {
  socket = openPsample({ netns: ns.name, source, receiveBufferBytes: 4096 });
  const drops: PsampleDropEvent[] = [];
  socket.on('drop', (drop) => drops.push(drop));
  const run = fed(socket);
  flows = run.flows;
  // Sent while this thread is blocked: the reader thread drains into the table meanwhile, but a
  // 4 KiB buffer overflows under 20,000 messages from a thread that does nothing else.
  const { sent } = sendWhileBlocked(ns.name, GROUP, burst(20_000));
  await waitFor(
    () => {
      const s = socket!.stats();
      return s.received + s.kernelDrops === sent;
    },
    10_000,
    'received + kernel drops to reach what was sent',
  );
  await settle(200);
  run.final();
  const stats = socket.stats();
  expect(stats.kernelDrops).toBeGreaterThan(0);
  expect(stats.received + stats.kernelDrops).toBe(sent);
  expect(run.drained.samples).toBe(stats.received);
  expect(drops.filter((d) => d.kind === 'kernel').reduce((n, d) => n + d.count, 0)).toBe(stats.kernelDrops);
});

it('the psample family unregistered and back mid-interval: the samples of both sides are in the flows, the gap reported', async () => {
  socket = openPsample({ netns: ns.name, source, groups: [1] });
  const gaps: PsampleGapEvent[] = [];
  socket.on('gap', (gap) => gaps.push(gap));
  const run = fed(socket, 10_000);
  flows = run.flows;
  const send = (group: number, messages: Uint8Array[]): number => sendWhileBlocked(ns.name, group, messages).sent;
  send(GROUP, burst(10));
  send(GROUP, [controllerMessage(CTRL_CMD_DELFAMILY, { name: 'psample', id: FAMILY, groups: { config: 14, packets: GROUP } })]);
  await waitFor(() => gaps.length === 1, 10_000, 'the gap to start');
  send(GROUP, [controllerMessage(CTRL_CMD_NEWFAMILY, { name: 'psample', id: FAMILY + 1, groups: { config: 14, packets: GROUP + 1 } })]);
  await waitFor(() => gaps.length === 2, 10_000, 'the socket to rejoin');
  send(GROUP + 1, burst(10, 10, FAMILY + 1));
  await waitFor(() => socket!.stats().received === 20, 10_000, '20 samples fed');
  run.final();
  expect(run.drained.samples).toBe(20);
  expect(socket.stats()).toMatchObject({ received: 20, familyGaps: 1, rejoins: 1, controlMessages: 2 });
});

it('close() of the socket, then of the table, during a flood that goes on: every message the socket read is in a flow or counted', async () => {
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const flood = new Worker(
    `const { workerData } = require('node:worker_threads');
     const { createInjector, encodePsample } = require(workerData.dist);
     const injector = createInjector({ protocol: 'usersock', groupId: workerData.group, netns: workerData.netns });
     const message = encodePsample({ group: 1, proto: 0x800, data: new Uint8Array(100) }, { familyId: workerData.family });
     while (Atomics.load(workerData.stop, 0) === 0) for (let i = 0; i < 100; i++) injector.send(message);`,
    { eval: true, workerData: { dist, group: GROUP, family: FAMILY, netns: ns.name, stop } },
  );
  try {
    for (let round = 0; round < 5; round++) {
      socket = openPsample({ netns: ns.name, source });
      const run = fed(socket, 5);
      flows = run.flows;
      await waitFor(() => run.drained.samples >= 10_000, 20_000, 'the first 10,000 samples in flows');
      socket.close();
      run.final();
      flows.close();
      const stats = socket.stats();
      // The reader stopped with the socket: nothing is fed after close(), so the flows hold what it took.
      expect(run.drained.samples).toBe(stats.received);
      expect(stats.datagrams).toBe(stats.received + stats.closeDiscards + stats.queueDrops);
    }
  } finally {
    Atomics.store(stop, 0, 1);
    await flood.terminate();
  }
});

it('the table closed while the reader still feeds it (the socket left open): what the reader reads then is counted as discarded', async () => {
  socket = openPsample({ netns: ns.name, source });
  const run = fed(socket);
  flows = run.flows;
  flows.close();
  const { sent } = sendWhileBlocked(ns.name, GROUP, burst(2_000));
  await waitFor(() => socket!.stats().closeDiscards === sent, 10_000, 'the refused samples to be counted');
  expect(socket.stats()).toMatchObject({ received: 0, closeDiscards: sent, kernelDrops: 0 });
  expect(run.drained.samples).toBe(0);
});

/** A sample whose DATA attribute says it runs past the message: the parser's to count as malformed. */
function lyingDataLength(message: Uint8Array): Uint8Array {
  const lying = message.slice();
  const view = new DataView(lying.buffer);
  for (let at = 20; at + 4 <= lying.length; at += (view.getUint16(at, true) + 3) & ~3) {
    if (view.getUint16(at + 2, true) === 6) {
      view.setUint16(at, 0xfff0, true);
      return lying;
    }
  }
  throw new Error('no DATA attribute');
}

it('lying attribute lengths and other groups among the fed samples: each counted as what it is, the rest in the flows', async () => {
  socket = openPsample({ netns: ns.name, source, groups: [1] });
  const run = fed(socket);
  flows = run.flows;
  const good = burst(300);
  const otherGroup = encodePsample(
    { group: 2, proto: 0x800, data: new Uint8Array(64), userCookie: new Uint8Array(8) },
    { familyId: FAMILY },
  );
  // The kernel's filter passes a datagram of several messages whole: the other group's message is userspace's to filter.
  const together = (...parts: Uint8Array[]): Uint8Array => Uint8Array.from(Buffer.concat(parts));
  const messages = good.map((m, i) => (i % 3 === 0 ? together(m, lyingDataLength(m)) : i % 3 === 1 ? together(m, otherGroup) : m));
  sendWhileBlocked(ns.name, GROUP, messages);
  await waitFor(() => run.drained.samples === good.length, 10_000, 'the good samples in the flows');
  await settle(100);
  run.final();
  expect(run.drained.samples).toBe(good.length);
  expect(socket.stats()).toMatchObject({ received: good.length, malformed: 100, filteredOut: 100, kernelDrops: 0, queueDrops: 0 });
});
