import { Worker } from 'node:worker_threads';

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
    workerData: { root: `${__dirname}/../..`, netns, groupId, messages, delayMs },
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
