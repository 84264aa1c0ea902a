import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeOvsCookie, decodePacket } from '../../src/index';
import { loadModules } from '../support/lab/kernel';
import { ifindexOf } from '../support/lab/netns';
import { startOvs } from '../support/lab/ovs';
import { collectSamples } from '../support/lab/samples';
import { run } from '../support/lab/shell';
import { openPsampleForEachTest } from '../support/lab/sockets';

// OVS 3.5 "local sampling": a Flow_Sample_Collector_Set with local_group_id
// turns the OpenFlow sample() action into the kernel datapath's psample()
// action. The datapath lives in the root namespace, so samples arrive there.
const BRIDGE = 'br-lab';
const COLLECTOR_SET_ID = 5;
const GROUP = 10;
const OBS_DOMAIN_ID = 0x2b000003;
const OBS_POINT_ID = 1012;
const PODS = [
  { netns: 'ovs0', port: 'ovs-p0', ip: '10.78.0.1' },
  { netns: 'ovs1', port: 'ovs-p1', ip: '10.78.0.2' },
] as const;

describe('Open vSwitch local sampling -> psample (real datapath)', () => {
  const open = openPsampleForEachTest();

  beforeAll(() => {
    loadModules('veth');
    startOvs();
    run('ovs-vsctl', ['add-br', BRIDGE]);
    for (const pod of PODS) {
      run('ip', ['netns', 'add', pod.netns]);
      run('ip', ['link', 'add', pod.port, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', pod.netns]);
      run('ip', ['-n', pod.netns, 'addr', 'add', `${pod.ip}/24`, 'dev', 'eth0']);
      run('ip', ['-n', pod.netns, 'link', 'set', 'eth0', 'up']);
      run('ip', ['link', 'set', pod.port, 'up']);
      run('ovs-vsctl', ['add-port', BRIDGE, pod.port]);
    }
    run('ovs-vsctl', [
      '--',
      '--id=@br',
      'get',
      'Bridge',
      BRIDGE,
      '--',
      'create',
      'Flow_Sample_Collector_Set',
      'bridge=@br',
      `id=${COLLECTOR_SET_ID}`,
      `local_group_id=${GROUP}`,
    ]);
    run('ovs-ofctl', ['del-flows', BRIDGE]);
    run('ovs-ofctl', [
      'add-flow',
      BRIDGE,
      `priority=100,in_port=${PODS[0].port},actions=sample(probability=65535,collector_set_id=${COLLECTOR_SET_ID},` +
        `obs_domain_id=${OBS_DOMAIN_ID},obs_point_id=${OBS_POINT_ID}),NORMAL`,
    ]);
    run('ovs-ofctl', ['add-flow', BRIDGE, 'priority=0,actions=NORMAL']);
  });

  afterAll(() => {
    // The collector set holds a strong reference to the bridge: it goes first.
    run('ovs-vsctl', ['--', '--all', 'destroy', 'Flow_Sample_Collector_Set', '--', 'del-br', BRIDGE]);
    for (const pod of PODS) run('ip', ['netns', 'del', pod.netns]);
  });

  it('decodes the observation ids, the probability flag and the group that were configured', async () => {
    const socket = open({ groups: [GROUP] });
    const pending = collectSamples(socket, (s) => s.filter((m) => m.proto === 0x0800).length >= 3, `3 IPv4 samples of group ${GROUP}`);
    run('ip', ['netns', 'exec', PODS[0].netns, 'ping', '-c', '3', '-i', '0.2', PODS[1].ip]);
    const samples = await pending;

    const inPort = ifindexOf('', PODS[0].port);
    for (const sample of samples) {
      expect(sample).toMatchObject({
        command: 'sample',
        group: GROUP,
        // OVS scales the 16-bit probability to 32 bits and flags it as such.
        probability: true,
        rate: 0xffffffff,
        // OVS does not number its samples.
        groupSeq: 0,
        iifindex: inPort,
      });
      expect(sample.userCookie?.length).toBe(8);
      expect(decodeOvsCookie(sample.userCookie ?? new Uint8Array())).toEqual({
        obsDomainId: OBS_DOMAIN_ID,
        obsPointId: OBS_POINT_ID,
      });
    }
    const pings = samples.filter((s) => s.proto === 0x0800);
    for (const ping of pings) {
      // OVS samples whole packets: 56 bytes of payload + ICMP 8 + IPv4 20 + Ethernet 14.
      expect(ping.origSize).toBe(98);
      expect(ping.data.length).toBe(98);
      expect(decodePacket(ping.data, ping.proto)).toMatchObject({
        network: { kind: 'ipv4', src: PODS[0].ip, dst: PODS[1].ip, protocol: 1 },
        transport: { kind: 'icmp', type: 8 },
      });
    }
  });
});
