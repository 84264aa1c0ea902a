// Where the lab benchmark's samples come from, and how many the kernel generated, counted apart
// from any consumer: psample's own GROUP_SEQ for tc, the datapath flows' packet counters times
// their psample actions for OVS. Both sample real UDP from udp-flood, one flow per scenario.
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BenchSetupError, inNetns, run, runAsync } from './shell.mjs';

const SOURCE_PORT = 5000;
const DESTINATION_PORT = 5001;
const UINT32 = 2 ** 32;
// Packets that measure how many samples one packet of the burst makes.
const CALIBRATION_PACKETS = 20;
// udp-flood returns while the softirq work of its last packets (their samples) may still run.
const SOFTIRQ_SETTLE_MS = 100;

// The sender and the softirq work of its packets get a CPU of their own, ahead of the consumer.
const SENDER_CPU = 0;

async function flood(tools, netns, { dst, dport = DESTINATION_PORT, sport = SOURCE_PORT, payloadBytes }, extra) {
  const args = [
    '--dst',
    dst,
    '--dport',
    String(dport),
    '--sport',
    String(sport),
    '--payload',
    String(payloadBytes),
    '--cpu',
    String(SENDER_CPU),
    ...extra,
  ];
  const sent = JSON.parse(await runAsync(...inNetns(netns, join(tools, 'udp-flood'), args)));
  await sleep(SOFTIRQ_SETTLE_MS);
  return sent;
}

/** GROUP_SEQ of every psample group (PSAMPLE_CMD_GET_GROUP dump). */
function groupSeqs(tools) {
  const seqs = new Map();
  for (const line of run(join(tools, 'psample-print'), ['--groups']).split('\n')) {
    const match = /^group (\d+) seq (\d+) refcount \d+$/.exec(line);
    if (match) seqs.set(Number(match[1]), Number(match[2]));
  }
  return seqs;
}

/**
 * tc act_sample: UDP from namespace bench-tc into the root namespace's end of a veth, whose
 * ingress samples every IPv4 packet to a psample group (rate 1) and then drops it, so no stack
 * work follows. Samples are delivered in the root namespace, where the consumers run.
 */
export function tcScenario({ tools, payloadBytes, group = 11 }) {
  const netns = 'bench-tc';
  const device = 'bench-tc0';
  const traffic = { dst: '10.99.0.1', payloadBytes };
  return {
    name: 'tc',
    group,
    samplesPerPacket: 1,
    describe:
      `tc: UDP ${netns} 10.99.0.2 -> ${traffic.dst}:${DESTINATION_PORT} (${payloadBytes} B payload) into veth ${device}, ` +
      `ingress matchall act_sample rate 1 group ${group}, then drop`,
    async setup() {
      run('modprobe', ['-a', 'psample', 'act_sample', 'act_gact', 'cls_matchall', 'sch_ingress', 'veth']);
      run('ip', ['netns', 'add', netns]);
      for (const key of ['all', 'default']) run(...inNetns(netns, 'sysctl', ['-q', '-w', `net.ipv6.conf.${key}.disable_ipv6=1`]));
      run('ip', ['link', 'add', device, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns]);
      run('sysctl', ['-q', '-w', `net.ipv6.conf.${device}.disable_ipv6=1`]);
      run('ip', ['link', 'set', device, 'up']);
      run('ip', ['-n', netns, 'link', 'set', 'lo', 'up']);
      run('ip', ['-n', netns, 'addr', 'add', '10.99.0.2/24', 'dev', 'eth0']);
      run('ip', ['-n', netns, 'link', 'set', 'eth0', 'up']);
      // Nothing answers ARP on a device that drops all it receives.
      const [{ address }] = JSON.parse(run('ip', ['-j', 'link', 'show', 'dev', device]));
      run('ip', ['-n', netns, 'neigh', 'replace', traffic.dst, 'lladdr', address, 'dev', 'eth0', 'nud', 'permanent']);
      run('tc', ['qdisc', 'add', 'dev', device, 'clsact']);
      run('tc', [
        'filter',
        'add',
        'dev',
        device,
        'ingress',
        'pref',
        '1',
        'protocol',
        'ip',
        'matchall',
        'action',
        'sample',
        'rate',
        '1',
        'group',
        String(group),
        'action',
        'drop',
      ]);
    },
    async warmup() {},
    /** Samples sent so far: psample's GROUP_SEQ of the filter's group. */
    generatedCounter() {
      const seq = groupSeqs(tools).get(group);
      if (seq === undefined) {
        throw new BenchSetupError(
          `psample group ${group} does not exist: the tc filter on ${device} is gone (tc filter show dev ${device} ingress)`,
        );
      }
      return seq;
    },
    generatedBetween: (before, after) => (after - before + UINT32) % UINT32,
    nothingGenerated:
      `tc act_sample generated no sample: GROUP_SEQ of psample group ${group} did not move; ` +
      `check 'tc -s filter show dev ${device} ingress' and 'ip -n ${netns} -s link'`,
    flood: (extra) => flood(tools, netns, traffic, extra),
  };
}

/**
 * Datapath flows (ovs-dpctl dump-flows): per flow, its packets and the psample actions it runs.
 * Every packet of a flow with N psample actions is N samples, whichever OVN stage sampled it.
 */
function sampledFlows() {
  const flows = new Map();
  for (const line of run('ovs-dpctl', ['dump-flows', '-m']).split('\n')) {
    const packets = /(?:^|[\s,])packets:(\d+)/.exec(line);
    const psamples = line.match(/psample\(/g)?.length ?? 0;
    if (!packets || psamples === 0) continue;
    flows.set(line.slice(0, packets.index), { packets: Number(packets[1]), psamples });
  }
  return flows;
}

/**
 * OVN ACL sampling on the ovn-kubernetes-shaped node of test/support/lab/ovnk-node.sh: UDP from
 * pod shop/frontend to pod shop/backend, allowed by NetworkPolicy allow-frontend, whose ACL
 * samples new (app acl-new) and established (app acl-est) traffic to psample group 42. The
 * backend drops what it receives at tc ingress, after OVS, so no ICMP answers add samples.
 */
export function ovnScenario({ tools, payloadBytes, node }) {
  const pod = (port) => {
    const found = node.pods.find((p) => p.port === port);
    if (found === undefined) throw new BenchSetupError(`ovnk-node.sh built no pod ${port}`);
    return found;
  };
  const frontend = pod('shop_frontend');
  const backend = pod('shop_backend');
  const forward = { dst: backend.ip, payloadBytes };
  const reply = { dst: frontend.ip, sport: DESTINATION_PORT, dport: SOURCE_PORT, payloadBytes };
  const generatedBetween = (before, after) => {
    let samples = 0;
    for (const [key, flow] of after) {
      const earlier = before.get(key)?.packets ?? 0;
      // A flow evicted and installed again under the same key starts counting from zero.
      samples += (flow.packets >= earlier ? flow.packets - earlier : flow.packets) * flow.psamples;
    }
    return samples;
  };
  const nothingGenerated =
    `OVS generated no sample: no datapath flow with a psample action counted packets; ` +
    `check 'ovs-dpctl dump-flows', the ACL's Sample rows and ovn-controller's log`;
  /**
   * Commits the connection (one new packet), confirms it (one reply), then installs the
   * established path's datapath flows, so the burst is all established traffic on known flows.
   */
  const warmup = async () => {
    await flood(tools, frontend.netns, forward, ['--count', '1']);
    await flood(tools, backend.netns, reply, ['--count', '1']);
    await flood(tools, frontend.netns, forward, ['--count', '3']);
  };
  return {
    name: 'ovn',
    group: node.psampleGroup,
    /** Established packets are sampled at more than one stage: offered rates are in samples/s. */
    samplesPerPacket: undefined,
    describe:
      `ovn: UDP ${frontend.port} ${frontend.ip} -> ${backend.port} ${backend.ip}:${DESTINATION_PORT} (${payloadBytes} B payload) ` +
      `through br-int, ACL NP:shop:allow-frontend sampling new and established (apps ${node.apps.aclNew}/${node.apps.aclEst}), group ${node.psampleGroup}`,
    async setup() {
      // Datapath flows outlive the pause while the next consumer starts, so no burst begins
      // with an upcall, whose packet the flow counters would not see.
      run('ovs-vsctl', ['set', 'Open_vSwitch', '.', 'other_config:max-idle=600000']);
      run(...inNetns(backend.netns, 'tc', ['qdisc', 'add', 'dev', 'eth0', 'clsact']));
      run(
        ...inNetns(backend.netns, 'tc', [
          'filter',
          'add',
          'dev',
          'eth0',
          'ingress',
          'pref',
          '1',
          'protocol',
          'ip',
          'matchall',
          'action',
          'drop',
        ]),
      );
      run('ip', ['-n', frontend.netns, 'neigh', 'replace', backend.ip, 'lladdr', backend.mac, 'dev', 'eth0', 'nud', 'permanent']);
      run('ip', ['-n', backend.netns, 'neigh', 'replace', frontend.ip, 'lladdr', frontend.mac, 'dev', 'eth0', 'nud', 'permanent']);
      await warmup();
      const before = sampledFlows();
      await flood(tools, frontend.netns, forward, ['--count', String(CALIBRATION_PACKETS)]);
      const samples = generatedBetween(before, sampledFlows());
      if (samples === 0) throw new BenchSetupError(nothingGenerated);
      this.samplesPerPacket = samples / CALIBRATION_PACKETS;
    },
    warmup,
    generatedCounter: sampledFlows,
    generatedBetween,
    nothingGenerated,
    flood: (extra) => flood(tools, frontend.netns, forward, extra),
  };
}

/** Starts OVS + OVN and builds the node (20-60 s under TCG); returns what ovnk-node.sh printed. */
export function startOvnNode(project) {
  return JSON.parse(run('bash', [join(project, 'test', 'support', 'lab', 'ovnk-node.sh'), 'up']));
}
