import { expect, it } from 'vitest';

import { dist, runNodeScript } from '../support/child';
import { fileNetns } from '../support/netns';

// worker.terminate() while samples flow into a socket of the worker, over and over. It runs in a
// child process because the failure it guards against aborts the whole process.
const GROUP = 12;
const FAMILY = 34;
const ROUNDS = 30;
const ns = fileNetns('ovnps-terminate');

const script = `
  const { Worker } = require('node:worker_threads');
  const { readdirSync } = require('node:fs');
  const { setTimeout: sleep } = require('node:timers/promises');
  const threads = () => readdirSync('/proc/self/task').length;
  const fds = () => readdirSync('/proc/self/fd').length;
  const workerData = { dist: ${JSON.stringify(dist)}, netns: process.env.NETNS, group: ${GROUP}, family: ${FAMILY} };

  // A flood that never stops until told to, from a worker of its own.
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const flood = new Worker(\`
    const { workerData } = require('node:worker_threads');
    const { createInjector, encodePsample } = require(workerData.dist);
    const injector = createInjector({ protocol: 'usersock', groupId: workerData.group, netns: workerData.netns });
    const message = encodePsample({ group: 1, groupSeq: 1, data: new Uint8Array(100) }, { familyId: workerData.family });
    while (Atomics.load(workerData.stop, 0) === 0) for (let i = 0; i < 100; i++) injector.send(message);
    injector.close();
  \`, { eval: true, workerData: { ...workerData, stop } });

  const reader = \`
    const { workerData, parentPort } = require('node:worker_threads');
    const socket = require(workerData.dist).openPsample({
      netns: workerData.netns, source: { protocol: 'usersock', familyId: workerData.family, groupId: workerData.group },
    });
    let samples = 0;
    socket.on('sample', () => { if (++samples === 1) parentPort.postMessage('flowing'); });
  \`;
  async function round(delayMs) {
    const worker = new Worker(reader, { eval: true, workerData });
    await new Promise((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject); });
    await sleep(delayMs);
    await worker.terminate();
  }

  (async () => {
    await round(0);  // the first worker starts threads node keeps for the next ones
    const before = { threads: threads(), fds: fds() };
    for (let i = 0; i < ${ROUNDS}; i++) await round(i % 7);
    const deadline = Date.now() + 10000;
    while ((threads() !== before.threads || fds() !== before.fds) && Date.now() < deadline) await sleep(20);
    const after = { threads: threads(), fds: fds() };
    Atomics.store(stop, 0, 1);
    await flood.terminate();
    process.stdout.write(JSON.stringify({ before, after }));
  })();
`;

it(`survives worker.terminate() under a steady flood ${ROUNDS} times in a row, leaking no thread or descriptor`, async () => {
  const child = await runNodeScript(script, { NETNS: ns.name }, 120_000);
  expect(child.signal, child.stderr).toBeNull();
  expect(child.status, child.stderr).toBe(0);
  const { before, after } = JSON.parse(child.stdout) as Record<'before' | 'after', { threads: number; fds: number }>;
  expect(after).toEqual(before);
});
