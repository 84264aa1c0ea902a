import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PsampleDropEvent } from '../../src/index';
import { createNetnsPair, deleteNetns, type NetnsEnd } from '../support/lab/netns';
import { collectSamples } from '../support/lab/samples';
import { traffic } from '../support/lab/shell';
import { openPsampleForEachTest } from '../support/lab/sockets';
import { addClsact, addSampleFilter, everyPacketTo, loadTcSampleModules } from '../support/lab/tc';

// A flood of tc samples into a receive buffer that holds only a couple of
// messages makes the kernel drop samples for real. tc numbers every sample of
// a group (GROUP_SEQ), so the samples received plus the drops the socket
// counted must add up exactly to the highest sequence number + 1.
const GROUP = 67;
const FLOOD = 3000;
const TAIL = 3;

let sampled: NetnsEnd;
let flooder: NetnsEnd;

describe('overload: kernel drops are counted exactly', () => {
  const open = openPsampleForEachTest();

  beforeAll(() => {
    loadTcSampleModules();
    [sampled, flooder] = createNetnsPair('fl', '10.80.0');
    addClsact(sampled);
  });

  afterAll(() => deleteNetns(sampled.netns, flooder.netns));

  it('received + counted drops == highest GROUP_SEQ + 1', async () => {
    const socket = open({ netns: sampled.netns, groups: [GROUP], receiveBufferBytes: 4096 });
    const dropEvents: PsampleDropEvent[] = [];
    socket.on('drop', (event: PsampleDropEvent) => dropEvents.push(event));
    // The group is created with the filter, after the socket: no sample predates the socket.
    addSampleFilter(sampled, { protocol: 'ip', action: everyPacketTo(GROUP) });
    const lastSeq = FLOOD + TAIL - 1;
    const pending = collectSamples(socket, (s) => s.some((m) => m.groupSeq === lastSeq), `GROUP_SEQ ${lastSeq}`, 120_000);
    await traffic(flooder.netns, 'ping', ['-f', '-l', '100', '-c', String(FLOOD), '-s', '1400', '-q', sampled.ip]);
    // Paced pings after the flood: the buffer has drained, so the last sequence number arrives.
    await traffic(flooder.netns, 'ping', ['-c', String(TAIL), '-i', '0.2', '-q', sampled.ip]);
    const samples = await pending;

    const stats = socket.stats();
    const highestSeq = Math.max(...samples.map((s) => s.groupSeq));
    expect(highestSeq).toBe(lastSeq);
    expect(stats.kernelDrops).toBeGreaterThan(0);
    expect(samples.length + stats.kernelDrops + stats.queueDrops).toBe(highestSeq + 1);
    expect(new Set(samples.map((s) => s.groupSeq)).size).toBe(samples.length);
    const reported = dropEvents.reduce((sum, event) => sum + event.count, 0);
    expect(reported).toBe(stats.kernelDrops + stats.queueDrops);
  });
});
