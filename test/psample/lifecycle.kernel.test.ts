import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Worker } from 'node:worker_threads';
import { expect, it } from 'vitest';

import { createInjector, encodePsample, openPsample, PsamplePermissionError, PsampleUnavailableError } from '../../src/index';
import { dist } from '../support/child';
import { hostHasPsample } from '../support/host-kernel';
import { fileNetns } from '../support/netns';
import { waitFor } from '../support/receive';

const GROUP = 7;
const FAMILY = 34;
const source = { protocol: 'usersock', familyId: FAMILY, groupId: GROUP } as const;
const ns = fileNetns('ovnps-lifecycle');

const openFds = (): number => readdirSync('/proc/self/fd').length;
const threads = (): number => readdirSync('/proc/self/task').length;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

it('leaks no file descriptor or thread over 1000 open/close cycles', () => {
  const fds = openFds();
  const tasks = threads();
  for (let i = 0; i < 1000; i++) openPsample({ netns: ns.name, source }).close();
  expect(openFds()).toBe(fds);
  expect(threads()).toBe(tasks);
});

it('releases the socket and its thread when an unreferenced socket is garbage collected', async () => {
  const fds = openFds();
  const tasks = threads();
  (() => {
    for (let i = 0; i < 20; i++) openPsample({ netns: ns.name, source }).unref();
  })();
  expect(threads()).toBe(tasks + 20);
  await waitFor(
    () => {
      gc();
      return openFds() === fds && threads() === tasks;
    },
    10_000,
    'finalizers to close the sockets',
  );
});

it('works in a worker thread, and the worker can be terminated with a socket open', async () => {
  const tasks = threads();
  const worker = new Worker(
    `
    const { workerData, parentPort } = require('node:worker_threads');
    const socket = require(workerData.dist).openPsample({
      netns: workerData.netns, source: { protocol: 'usersock', familyId: 34, groupId: workerData.group } });
    socket.on('sample', () => parentPort.postMessage(1));
    parentPort.postMessage('ready');
    `,
    { eval: true, workerData: { dist, group: GROUP, netns: ns.name } },
  );
  const counts: number[] = [];
  await new Promise<void>((resolve, reject) => {
    worker.on('message', (m: string | number) => (m === 'ready' ? resolve() : counts.push(m as number)));
    worker.once('error', reject);
  });
  const injector = createInjector({ protocol: 'usersock', groupId: GROUP, netns: ns.name });
  for (let i = 0; i < 10; i++) injector.send(encodePsample({ group: 1, groupSeq: i }, { familyId: FAMILY }));
  injector.close();
  await waitFor(() => counts.reduce((a, b) => a + b, 0) === 10, 10_000, '10 samples in the worker');
  await worker.terminate();
  await waitFor(() => threads() === tasks, 10_000, 'the worker and its reader thread to end');
});

it.skipIf(hostHasPsample)('fails with PSAMPLE_UNAVAILABLE on a kernel without the psample family', () => {
  expect(() => openPsample()).toThrow(PsampleUnavailableError);
  try {
    openPsample();
  } catch (error) {
    expect((error as PsampleUnavailableError).code).toBe('PSAMPLE_UNAVAILABLE');
    expect((error as Error).message).toMatch(/load the psample module/);
  }
});

it('fails with PSAMPLE_PERMISSION when joining without CAP_NET_ADMIN', () => {
  const script = `
    try { require(${JSON.stringify(dist)}).openPsample({ source: ${JSON.stringify(source)} }); }
    catch (e) { process.stdout.write(JSON.stringify({ name: e.name, code: e.code, message: e.message })); }`;
  const out = execFileSync(
    'setpriv',
    ['--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all', process.execPath, '-e', script],
    { encoding: 'utf8' },
  );
  const error = JSON.parse(out) as { name: string; code: string; message: string };
  expect(error.name).toBe(PsamplePermissionError.name);
  expect(error.code).toBe('PSAMPLE_PERMISSION');
  expect(error.message).toMatch(/CAP_NET_ADMIN/);
});
