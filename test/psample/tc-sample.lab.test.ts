import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodePacket } from '../../src/index';
import { createNetnsPair, deleteNetns, ifindexOf, macOf, type NetnsEnd } from '../support/lab/netns';
import { collectSamples, hex } from '../support/lab/samples';
import { settle, traffic } from '../support/lab/shell';
import { openPsampleForEachTest } from '../support/lab/sockets';
import { addClsact, addSampleFilter, deleteClsact, loadTcSampleModules } from '../support/lab/tc';

// tc act_sample on the ingress (and egress) of a veth inside a namespace:
// samples are multicast only in that namespace. Every test uses its own
// psample group, created when its filter is added, so GROUP_SEQ starts at 0.
const COOKIE = '00112233445566778899aabbccddeeff';
const ETH_P_IP = 0x0800;

let sampled: NetnsEnd;
let peer: NetnsEnd;

function sampleIp(direction: 'ingress' | 'egress', pref: number, action: string[]): void {
  addSampleFilter(sampled, { direction, pref, protocol: 'ip', action });
}

/** Every filter goes, and with them their psample groups. */
function resetFilters(): void {
  deleteClsact(sampled);
  addClsact(sampled);
}

function ping(count: number, size: number): Promise<void> {
  return traffic(peer.netns, 'ping', ['-c', String(count), '-i', '0.2', '-s', String(size), sampled.ip]);
}

describe('tc act_sample -> psample (real kernel)', () => {
  const open = openPsampleForEachTest();
  beforeAll(() => {
    loadTcSampleModules();
    [sampled, peer] = createNetnsPair('tc', '10.77.0');
    addClsact(sampled);
  });
  afterEach(resetFilters);
  afterAll(() => deleteNetns(sampled.netns, peer.netns));

  it('decodes a 16-byte cookie, trunc 128 and every header of an ingress sample', async () => {
    const socket = open({ netns: sampled.netns, groups: [7] });
    sampleIp('ingress', 10, ['rate', '1', 'group', '7', 'trunc', '128', 'cookie', COOKIE]);
    const pending = collectSamples(socket, (s) => s.length >= 3, '3 samples of group 7');
    const before = BigInt(Date.now()) * 1_000_000n;
    await ping(3, 500);
    const samples = await pending;
    const after = BigInt(Date.now()) * 1_000_000n;

    const ifindex = ifindexOf(sampled.netns, sampled.dev);
    for (const [index, sample] of samples.entries()) {
      expect(sample).toMatchObject({
        command: 'sample',
        group: 7,
        groupSeq: index,
        iifindex: ifindex,
        rate: 1,
        probability: false,
        proto: ETH_P_IP,
        // 500 bytes of payload + ICMP 8 + IPv4 20 + Ethernet 14
        origSize: 542,
      });
      expect(sample.oifindex).toBeUndefined();
      expect(sample.data.length).toBe(128);
      expect(hex(sample.userCookie)).toBe(COOKIE);
      expect(sample.timestampNs).toBeGreaterThanOrEqual(before);
      expect(sample.timestampNs).toBeLessThanOrEqual(after);
      expect(decodePacket(sample.data, sample.proto)).toMatchObject({
        ethernet: { dst: macOf(sampled.netns, sampled.dev), src: macOf(peer.netns, peer.dev) },
        network: { kind: 'ipv4', src: peer.ip, dst: sampled.ip, protocol: 1, totalLength: 528 },
        transport: { kind: 'icmp', type: 8 },
        truncated: true,
      });
    }
  });

  it('delivers the whole frame and no cookie when the action has neither trunc nor cookie', async () => {
    const socket = open({ netns: sampled.netns, groups: [17] });
    sampleIp('ingress', 10, ['rate', '1', 'group', '17']);
    const pending = collectSamples(socket, (s) => s.length >= 2, '2 samples of group 17');
    await ping(2, 56);
    const samples = await pending;

    for (const sample of samples) {
      expect(sample).toMatchObject({ group: 17, rate: 1, probability: false, proto: ETH_P_IP, origSize: 98 });
      expect(sample.data.length).toBe(98);
      expect(sample.userCookie).toBeUndefined();
      expect(decodePacket(sample.data, sample.proto)).toMatchObject({
        network: { kind: 'ipv4', src: peer.ip, dst: sampled.ip, protocol: 1 },
        transport: { kind: 'icmp', type: 8 },
        truncated: false,
      });
    }
  });

  it('numbers the samples of a group without a gap (GROUP_SEQ 0, 1, 2, ...)', async () => {
    const socket = open({ netns: sampled.netns, groups: [27] });
    sampleIp('ingress', 10, ['rate', '1', 'group', '27', 'trunc', '64']);
    const pending = collectSamples(socket, (s) => s.length >= 40, '40 samples of group 27');
    await traffic(peer.netns, 'ping', ['-c', '40', '-i', '0.01', '-q', sampled.ip]);
    const samples = await pending;

    expect(samples.map((s) => s.groupSeq)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(socket.stats()).toMatchObject({ kernelDrops: 0, queueDrops: 0, malformed: 0 });
  });

  it('keeps samples in their namespace: only a socket opened with netns sees them', async () => {
    const inside = open({ netns: sampled.netns });
    const outside = open();
    const outsideSamples: unknown[] = [];
    outside.on('sample', (sample) => outsideSamples.push(sample));
    sampleIp('ingress', 10, ['rate', '1', 'group', '37']);
    const pending = collectSamples(inside, (s) => s.length >= 3, '3 samples in the namespace');
    await ping(3, 56);
    const samples = await pending;
    await settle(500);

    expect(samples.every((s) => s.group === 37)).toBe(true);
    expect(outsideSamples).toEqual([]);
    expect(outside.stats().received).toBe(0);
  });

  it('filters by group in the kernel: two tc filters on groups 47 and 48', async () => {
    const onlyReplies = open({ netns: sampled.netns, groups: [48] });
    const everything = open({ netns: sampled.netns });
    // Requests are sampled on ingress (47), the answers on egress (48).
    sampleIp('ingress', 10, ['rate', '1', 'group', '47']);
    sampleIp('egress', 10, ['rate', '1', 'group', '48']);
    const replies = collectSamples(onlyReplies, (s) => s.length >= 3, '3 samples of group 48');
    const both = collectSamples(everything, (s) => s.length >= 6, '6 samples of groups 47 and 48');
    await ping(3, 56);
    const [replySamples, allSamples] = await Promise.all([replies, both]);
    await settle(500);

    const ifindex = ifindexOf(sampled.netns, sampled.dev);
    expect(replySamples.map((s) => s.group)).toEqual([48, 48, 48]);
    for (const sample of replySamples) {
      expect(sample.oifindex).toBe(ifindex);
      expect(decodePacket(sample.data, sample.proto)).toMatchObject({
        network: { kind: 'ipv4', src: sampled.ip, dst: peer.ip, protocol: 1 },
        transport: { kind: 'icmp', type: 0 },
      });
    }
    expect(allSamples.filter((s) => s.group === 47).map((s) => s.groupSeq)).toEqual([0, 1, 2]);
    expect(allSamples.filter((s) => s.group === 48).map((s) => s.groupSeq)).toEqual([0, 1, 2]);
    expect(onlyReplies.stats().received).toBe(3);
  });
});
