import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePacket } from '../../src/index';
import { createNetnsPair, deleteNetns, macOf, type NetnsEnd } from '../support/lab/netns';
import { collectSamples } from '../support/lab/samples';
import { runInNetns, traffic } from '../support/lab/shell';
import { openPsampleForEachTest } from '../support/lab/sockets';
import { loadTcSampleModules, sampleIngress } from '../support/lab/tc';

// A VXLAN device in collect-metadata ('external') mode hands every decapsulated
// packet its tunnel key as skb metadata; psample copies that into
// PSAMPLE_ATTR_TUNNEL. The sender uses a fixed VNI, TTL and source port range
// of one port, so every field of the metadata is known in advance.
const VNI = 4242;
const VXLAN_PORT = 4789;
const SOURCE_PORT = 40000;
const OUTER_TTL = 64;
const GROUP = 57;

let receiver: NetnsEnd;
let sender: NetnsEnd;

describe('tunnel metadata of a sample taken on a collect-metadata VXLAN device', () => {
  const open = openPsampleForEachTest();

  beforeAll(() => {
    loadTcSampleModules('vxlan');
    [receiver, sender] = createNetnsPair('tun', '192.168.50');
    runInNetns(receiver.netns, 'ip', ['link', 'add', 'vx0', 'type', 'vxlan', 'external', 'dstport', String(VXLAN_PORT)]);
    runInNetns(receiver.netns, 'ip', ['addr', 'add', '10.79.0.1/24', 'dev', 'vx0']);
    runInNetns(receiver.netns, 'ip', ['link', 'set', 'vx0', 'up']);
    runInNetns(sender.netns, 'ip', [
      'link',
      'add',
      'vx1',
      'type',
      'vxlan',
      'id',
      String(VNI),
      'remote',
      receiver.ip,
      'local',
      sender.ip,
      'dstport',
      String(VXLAN_PORT),
      'srcport',
      String(SOURCE_PORT),
      String(SOURCE_PORT + 1),
      'ttl',
      String(OUTER_TTL),
    ]);
    runInNetns(sender.netns, 'ip', ['addr', 'add', '10.79.0.2/24', 'dev', 'vx1']);
    runInNetns(sender.netns, 'ip', ['link', 'set', 'vx1', 'up']);
    // The collect-metadata end cannot answer ARP without a route to send by, so the sender knows the MAC.
    runInNetns(sender.netns, 'ip', ['neigh', 'add', '10.79.0.1', 'lladdr', macOf(receiver.netns, 'vx0'), 'dev', 'vx1']);
    sampleIngress({ netns: receiver.netns, dev: 'vx0' }, GROUP);
  });

  afterAll(() => deleteNetns(receiver.netns, sender.netns));

  it('decodes tunnel id, outer addresses, ports and TTL from PSAMPLE_ATTR_TUNNEL', async () => {
    const socket = open({ netns: receiver.netns, groups: [GROUP] });
    const pending = collectSamples(socket, (s) => s.length >= 2, `2 samples of group ${GROUP} on vx0`);
    await traffic(sender.netns, 'ping', ['-c', '2', '-i', '0.2', '-W', '1', '10.79.0.1']);
    const samples = await pending;

    for (const sample of samples) {
      expect(sample.tunnel).toMatchObject({
        id: BigInt(VNI),
        ipv4Src: sender.ip,
        ipv4Dst: receiver.ip,
        tpSrc: SOURCE_PORT,
        tpDst: VXLAN_PORT,
        ttl: OUTER_TTL,
      });
      expect(decodePacket(sample.data, sample.proto)).toMatchObject({
        network: { kind: 'ipv4', src: '10.79.0.2', dst: '10.79.0.1' },
        transport: { kind: 'icmp', type: 8 },
      });
    }
  });
});
