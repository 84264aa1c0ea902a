import { Worker } from 'node:worker_threads';
import { netnsPath } from '../../src/psample/options';

// The raw addon opens the namespace file it is given: netnsPath names it, as the library does.

/**
 * Sends pre-encoded messages from a worker thread, so the main JavaScript thread can be blocked
 * (or busy) while the burst is in flight. The worker loads the addon itself: this also proves
 * the addon works in worker threads.
 */
export function sendFromWorker(netns: string, groupId: number, messages: Uint8Array[], delayMs = 0): Promise<number> {
  const source = `
    const { workerData, parentPort } = require('node:worker_threads');
    const addon = require('node-gyp-build')(workerData.root);
    setTimeout(() => {
      const injector = new addon.NativeInjector({ protocol: 'usersock', groupId: workerData.groupId, netns: workerData.netns });
      for (const m of workerData.messages) injector.send(m);
      injector.close();
      parentPort.postMessage(workerData.messages.length);
    }, workerData.delayMs);
  `;
  const worker = new Worker(source, {
    eval: true,
    workerData: { root: `${__dirname}/../..`, netns: netnsPath(netns), groupId, messages, delayMs },
  });
  return new Promise((resolve, reject) => {
    worker.once('message', (sent: number) => {
      void worker.terminate();
      resolve(sent);
    });
    worker.once('error', reject);
  });
}

/** Blocks this thread (no event loop turns, no callbacks) for `ms`. */
export function blockThread(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Sends pre-encoded messages from a worker thread while this thread stays blocked (no event loop
 * turn, no callback) until the last one is sent. What the messages went to is then all in the
 * socket or in its reader's queue, none delivered yet. `exited` resolves once the worker's thread
 * is gone.
 */
export function sendWhileBlocked(netns: string, groupId: number, messages: Uint8Array[]): { sent: number; exited: Promise<unknown> } {
  const done = new Int32Array(new SharedArrayBuffer(4));
  const source = `
    const { workerData } = require('node:worker_threads');
    const addon = require('node-gyp-build')(workerData.root);
    const injector = new addon.NativeInjector({ protocol: 'usersock', groupId: workerData.groupId, netns: workerData.netns });
    for (const m of workerData.messages) injector.send(m);
    injector.close();
    Atomics.store(workerData.done, 0, 1);
    Atomics.notify(workerData.done, 0);
  `;
  const worker = new Worker(source, {
    eval: true,
    workerData: { root: `${__dirname}/../..`, netns: netnsPath(netns), groupId, messages, done },
  });
  if (Atomics.wait(done, 0, 0, 60_000) === 'timed-out') throw new Error('the sender worker did not finish within 60 s');
  return { sent: messages.length, exited: worker.terminate() };
}
