import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { PsampleGapEvent } from '../../src/index';
import { loadModules, unloadModule } from '../support/lab/kernel';
import { createNetnsPair, deleteNetns, type NetnsEnd } from '../support/lab/netns';
import { startOvs, stopOvs } from '../support/lab/ovs';
import { collectSamples } from '../support/lab/samples';
import { traffic } from '../support/lab/shell';
import { openPsampleForEachTest } from '../support/lab/sockets';
import { deleteClsact, loadTcSampleModules, sampleIngress } from '../support/lab/tc';

// The psample module unloaded and loaded again under a live socket (a kernel module reload, an
// Open vSwitch upgrade): the kernel drops the socket's membership with the family, and the family
// comes back with a new id. The socket must follow it, and say there was a gap.
const GROUP = 71;
const LIBRARY = path.join(__dirname, '..', '..', 'dist', 'index.js');

let sampled: NetnsEnd;
let peer: NetnsEnd;
let ovsWasRunning = false;

function waitForGaps(gaps: PsampleGapEvent[], count: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 30_000;
    const check = setInterval(() => {
      if (gaps.length >= count) resolve();
      else if (Date.now() > deadline) reject(new Error(`${gaps.length} gap events after 30 s, expected ${count}`));
      else return;
      clearInterval(check);
    }, 20);
  });
}

describe('psample unloaded and loaded again under a live socket (real kernel)', () => {
  const open = openPsampleForEachTest();
  beforeAll(() => {
    loadTcSampleModules();
    [sampled, peer] = createNetnsPair('rl', '10.81.0');
  });
  afterAll(() => {
    deleteNetns(sampled.netns, peer.netns);
    loadModules('psample', 'act_sample');
    if (ovsWasRunning) startOvs();
  });

  it('rejoins the re-registered family, samples flow again, and the gap is reported as an event and a counter', async () => {
    const socket = open({ netns: sampled.netns, groups: [GROUP] });
    const gaps: PsampleGapEvent[] = [];
    socket.on('gap', (gap) => gaps.push(gap));
    const familyBefore = socket.familyId;

    sampleIngress(sampled, GROUP);
    const before = collectSamples(socket, (s) => s.length >= 3, '3 samples before the reload');
    await traffic(peer.netns, 'ping', ['-c', '3', '-i', '0.2', sampled.ip]);
    expect((await before).every((s) => s.group === GROUP)).toBe(true);

    deleteClsact(sampled);
    ovsWasRunning = stopOvs();
    await unloadModule('psample');
    await waitForGaps(gaps, 1);
    loadModules('psample', 'act_sample');
    await waitForGaps(gaps, 2);

    sampleIngress(sampled, GROUP);
    const after = collectSamples(socket, (s) => s.length >= 3, '3 samples after the reload');
    await traffic(peer.netns, 'ping', ['-c', '3', '-i', '0.2', sampled.ip]);
    const samples = await after;
    deleteClsact(sampled);

    // A new group of the new family: its sequence starts again.
    expect(samples.map((s) => [s.group, s.groupSeq])).toEqual([
      [GROUP, 0],
      [GROUP, 1],
      [GROUP, 2],
    ]);
    expect(gaps[0]).toEqual({ phase: 'start', total: 1 });
    expect(gaps[1]).toMatchObject({ phase: 'end', total: 1, familyId: socket.familyId, groupId: socket.groupId });
    expect(gaps[1]!.durationMs).toBeGreaterThan(0);
    expect(socket.stats()).toMatchObject({ familyGaps: 1, rejoins: 1, kernelDrops: 0, malformed: 0, foreign: 0 });
    console.log(`psample family id ${familyBefore} -> ${socket.familyId}, gap ${gaps[1]!.durationMs?.toFixed(1)} ms`);
  });
  // The case no notification reports: the socket's buffer is full (its process stopped) while the
  // family goes and comes back, so the kernel drops both notifications with the samples.
  it('rejoins when a full receive buffer swallowed both notifications, and reports the gap', async () => {
    const listener = startStoppableListener();
    try {
      await listener.until((line) => line.kind === 'open', 'the socket to open');
      sampleIngress(sampled, GROUP);
      await traffic(peer.netns, 'ping', ['-c', '3', '-i', '0.2', sampled.ip]);
      await listener.until((line) => line.kind === 'sample', 'a sample before the reload');

      listener.child.kill('SIGSTOP');
      await traffic(peer.netns, 'ping', ['-c', '300', '-i', '0.002', '-q', sampled.ip]);
      deleteClsact(sampled);
      ovsWasRunning = stopOvs() || ovsWasRunning;
      await unloadModule('psample');
      loadModules('psample', 'act_sample');
      listener.child.kill('SIGCONT');

      const end = await listener.until((line) => line.kind === 'gap' && line.phase === 'end', 'the gap to end');
      sampleIngress(sampled, GROUP);
      const samplesBefore = listener.lines.length;
      await traffic(peer.netns, 'ping', ['-c', '3', '-i', '0.2', sampled.ip]);
      await listener.until(
        (line, index) => index >= samplesBefore && line.kind === 'sample' && line.groupSeq === 2,
        'three samples after the reload',
      );
      deleteClsact(sampled);
      listener.child.stdin!.end();
      const stats = await listener.until((line) => line.kind === 'stats', 'the final stats');
      console.log(`missed notifications: gap end ${JSON.stringify(end)}, stats ${JSON.stringify(stats)}`);
      expect(end).toMatchObject({ total: 1 });
      expect(stats).toMatchObject({ familyGaps: 1, rejoins: 1 });
      expect(stats.kernelDrops).toBeGreaterThan(0);
    } finally {
      listener.child.kill('SIGKILL');
    }
  });
});

type ListenerLine = Record<string, unknown> & { kind: string };

/**
 * A socket in a process of its own, with the smallest receive buffer, so the test can stop it
 * (SIGSTOP) and let its buffer fill. Prints one JSON line once open, per sample and per gap, and
 * its stats once its stdin ends.
 */
function startStoppableListener(): {
  child: ChildProcess;
  lines: ListenerLine[];
  until(match: (line: ListenerLine, index: number) => boolean, what: string): Promise<ListenerLine>;
} {
  const script = `
    const { openPsample } = require(${JSON.stringify(LIBRARY)});
    const socket = openPsample({ netns: ${JSON.stringify(sampled.netns)}, groups: [${GROUP}], receiveBufferBytes: 4096 });
    const print = (line) => process.stdout.write(JSON.stringify(line) + '\\n');
    socket.on('sample', (s) => print({ kind: 'sample', groupSeq: s.groupSeq }));
    socket.on('gap', (gap) => print({ kind: 'gap', ...gap }));
    print({ kind: 'open' });
    process.stdin.resume();
    process.stdin.on('end', () => { print({ kind: 'stats', ...socket.stats() }); socket.close(); });
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: ListenerLine[] = [];
  const waiters = new Set<() => void>();
  createInterface({ input: child.stdout }).on('line', (text) => {
    lines.push(JSON.parse(text) as ListenerLine);
    for (const waiter of waiters) waiter();
  });
  const until = (match: (line: ListenerLine, index: number) => boolean, what: string): Promise<ListenerLine> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const found = lines.find(match);
        if (found === undefined) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(found);
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`timed out waiting for ${what}; the listener printed ${JSON.stringify(lines.slice(-5))}`));
      }, 30_000);
      waiters.add(check);
      check();
    });
  return { child, lines, until };
}
