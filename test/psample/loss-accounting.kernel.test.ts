import { spawn } from 'node:child_process';

import { afterEach, expect, it } from 'vitest';

import { encodePsample, openPsample, type PsampleSocket, type PsampleStats } from '../../src/index';
import { dist } from '../support/child';
import { fileNetns } from '../support/netns';
import { collectSamples, waitFor } from '../support/receive';
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
  // The reader thread outruns the sender on an idle machine and not on a busy one: the burst is
  // sent while the whole reading process is stopped (SIGSTOP), so the 4 KiB buffer overflows for sure.
  const reader = spawn(
    process.execPath,
    [
      '-e',
      `
      const { openPsample } = require(${JSON.stringify(dist)});
      const socket = openPsample({ receiveBufferBytes: 4096, netns: ${JSON.stringify(ns.name)},
        source: { protocol: 'usersock', familyId: ${FAMILY}, groupId: ${GROUP} } });
      let received = 0, whole = 0, kernelDropEvents = 0;
      socket.on('sample', (s) => { received++; if (s.data.byteLength === 150) whole++; });
      socket.on('drop', (d) => { if (d.kind === 'kernel') kernelDropEvents += d.count; });
      process.stdin.once('data', (data) => {
        const sent = Number(data);
        const timer = setInterval(() => {
          const s = socket.stats();
          if (s.received + s.kernelDrops + s.queueDrops < sent) return;
          clearInterval(timer);
          setTimeout(() => {
            process.stdout.write(JSON.stringify({ stats: socket.stats(), received, whole, kernelDropEvents }));
            socket.close();
          }, 200);
        }, 5);
      });
      process.stdout.write('ready\\n');
      `,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  let out = '';
  reader.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => reader.on('exit', resolve));
  await waitFor(() => out.includes('ready\n'), 10_000, 'the reading process');
  out = '';
  process.kill(reader.pid!, 'SIGSTOP');
  let sent: number;
  try {
    sent = await sendFromWorker(ns.name, GROUP, burst(5_000));
  } finally {
    process.kill(reader.pid!, 'SIGCONT');
  }
  reader.stdin.end(String(sent));
  expect(await exited).toBe(0);
  const { stats, received, whole, kernelDropEvents } = JSON.parse(out) as {
    stats: PsampleStats;
    received: number;
    whole: number;
    kernelDropEvents: number;
  };
  expect(stats.received + stats.kernelDrops + stats.queueDrops).toBe(sent);
  expect(received).toBe(stats.received);
  expect(stats.kernelDrops).toBeGreaterThan(0);
  // Every sample that did arrive is whole, and the drop events add up to the counter.
  expect(whole).toBe(received);
  expect(kernelDropEvents).toBe(stats.kernelDrops);
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
