import { readFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileNetns } from '../support/netns';
import { injectedSourceArgs, jsonLines, startCli, type CliProcess } from '../support/cli';
import { icmpEcho, tcpSyn, udp } from './support/frames';
import {
  ACLS,
  cookieOf,
  MANAGEMENT_IP,
  OUTSIDE_IP,
  PODS,
  PSAMPLE_GROUP,
  UDN_KEY,
  UDN_POD,
  useOvnkNode,
  type NodeSample,
} from './support/ovnk-node';

const ns = fileNetns('ovnps-cli-watch');
const GROUP = 11;
const T0 = 1_750_000_000_123_456_789n;

const node = useOvnkNode(ns, GROUP);

function watch(args: readonly string[]): CliProcess {
  return startCli(node.cliArgs('watch', ['--group', String(PSAMPLE_GROUP), ...args]), { env: { TZ: 'UTC' } });
}

type Sample = NodeSample;

/** Samples at T0 unless told. */
const send = (...samples: Sample[]): void => node.send(...samples.map((sample) => ({ at: T0, ...sample })));

const ping = (from: { ip: string }, to: { ip: string }, seq = 1): Uint8Array => icmpEcho({ src: from.ip, dst: to.ip, seq });

/** tenant-b/client pings shop/backend: tier 1 passes, then the namespace isolation drops it. */
function passThenDrop(seq = 1, at = T0): Sample[] {
  const data = ping(PODS.client, PODS.backend, seq);
  return [
    { data, cookie: cookieOf('anpPass'), at },
    { data, cookie: cookieOf('isolation'), at: at + 20_000n },
  ];
}

async function finished(run: CliProcess): Promise<{ code: number | null; stdout: string }> {
  const code = await run.exited;
  return { code, stdout: run.stdout() };
}

describe('watch --format human', () => {
  it('prints one aligned line per packet: time, verdict, policies, namespace, pods, 5-tuple, interface and the verdict chain', async () => {
    const run = watch(['--count', '2']);
    await run.listening;
    send(...passThenDrop(1), { data: ping(PODS.frontend, PODS.backend, 2), cookie: cookieOf('allowFrontend'), at: T0 + 1_000_000n });
    const { code, stdout } = await finished(run);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^15:06:40\.123456 {2}DROP {4}anp:pass-monitoring→isolation:shop {2}shop {2}tenant-b\/client → shop\/backend {2}ICMP 10\.244\.0\.6 → 10\.244\.0\.4 echo-request {2}if1 {2}Delegated by admin network policy pass-monitoring → Dropped by network policies isolation in namespace shop$/,
    );
    expect(lines[1]).toMatch(
      /^15:06:40\.124456 {2}ALLOW {3}np:shop\/allow-frontend\s+shop {2}shop\/frontend → shop\/backend\s+ICMP 10\.244\.0\.3 → 10\.244\.0\.4 echo-request\s+if1 {2}Allowed by network policy allow-frontend in namespace shop$/,
    );
    // Aligned: every column starts where the one above it does.
    expect(lines[1]!.indexOf('shop/frontend')).toBe(lines[0]!.indexOf('tenant-b/client'));
    expect(stdout).not.toContain('\u001b[');
  });

  it('--no-group prints the samples of one packet one by one', async () => {
    const run = watch(['--count', '2', '--no-group']);
    await run.listening;
    send(...passThenDrop(3));
    const { stdout } = await finished(run);
    const lines = stdout.trimEnd().split('\n');
    expect(lines.map((line) => line.split(/ {2,}/)[1])).toEqual(['PASS', 'DROP']);
    expect(lines[0]).toMatch(/Delegated by admin network policy pass-monitoring$/);
    expect(lines[1]).toMatch(/Dropped by network policies isolation in namespace shop$/);
  });
});

describe('watch --format json', () => {
  it('writes the documented schema: sample fields, cookie, packet, pods, verdict chain with the decoder events', async () => {
    const run = watch(['--count', '1', '--format', 'json']);
    await run.listening;
    send(...passThenDrop(4));
    const { code, stdout } = await finished(run);
    expect(code).toBe(0);
    const event = JSON.parse(stdout) as Record<string, unknown>;
    expect(event).toMatchObject({
      version: 1,
      time: '2025-06-15T15:06:40.123456789Z',
      timestampNs: String(T0),
      verdict: 'drop',
      message: 'Delegated by admin network policy pass-monitoring → Dropped by network policies isolation in namespace shop',
      src: { kind: 'pod', ip: PODS.client.ip, namespace: 'tenant-b', name: 'client', network: 'default', port: 'tenant-b_client' },
      dst: { kind: 'pod', ip: PODS.backend.ip, namespace: 'shop', name: 'backend', network: 'default' },
      group: PSAMPLE_GROUP,
      iifindex: 1,
      probability: true,
      rate: 0xffffffff,
      cookie: Buffer.from(cookieOf('anpPass')).toString('hex'),
      datapath: { key: 1, switch: 'node-a', network: 'default' },
      samples: 2,
      packet: { network: { kind: 'ipv4', src: PODS.client.ip, dst: PODS.backend.ip }, transport: { kind: 'icmp', name: 'echo-request' } },
    });
    expect(event.chain).toEqual([
      expect.objectContaining({
        verdict: 'pass',
        policy: 'anp:pass-monitoring',
        samples: 1,
        cookie: Buffer.from(cookieOf('anpPass')).toString('hex'),
        event: expect.objectContaining({
          status: 'decoded',
          app: 'acl-new',
          action: 'pass',
          owner: expect.objectContaining({ type: 'AdminNetworkPolicy', name: 'pass-monitoring' }),
        }),
      }),
      expect.objectContaining({
        verdict: 'drop',
        policy: 'isolation:shop',
        event: expect.objectContaining({ message: 'Dropped by network policies isolation in namespace shop, direction Ingress' }),
      }),
    ]);
    // Interface names come from the OVS database or this namespace's sysfs, neither of which has the injected samples' namespace.
    expect(event).not.toHaveProperty('interface');
    expect(event.data).toBe(Buffer.from(ping(PODS.client, PODS.backend, 4)).toString('hex'));
  });

  it('resolves pods per network: the same address is a default-network pod or a user-defined network pod by datapath; nodes and outside addresses too', async () => {
    const run = watch(['--count', '3', '--format', 'json']);
    await run.listening;
    send(
      { data: ping(UDN_POD, PODS.backend, 5), cookie: cookieOf('allowFrontend', 'acl-new', UDN_KEY) },
      { data: ping({ ip: MANAGEMENT_IP }, PODS.db, 6), cookie: cookieOf('isolation'), at: T0 + 1_000_000n },
      { data: ping(PODS.frontend, { ip: OUTSIDE_IP }, 7), cookie: cookieOf('egressFirewall'), at: T0 + 2_000_000n },
    );
    await finished(run);
    const events = jsonLines<{ src: unknown; dst: unknown; message: string }>(run.stdout());
    expect(events[0]!.src).toEqual({
      kind: 'pod',
      ip: UDN_POD.ip,
      namespace: 'blue',
      name: 'web',
      network: 'tenant-blue',
      nad: 'blue/tenant-blue',
      port: 'tenant.blue_blue_web',
    });
    expect(events[0]!.dst).toEqual({ kind: 'cluster', ip: PODS.backend.ip, network: 'tenant-blue' });
    expect(events[1]!.src).toEqual({ kind: 'node', ip: MANAGEMENT_IP, name: 'node-a', network: 'default', port: 'k8s-node-a' });
    expect(events[2]).toMatchObject({ dst: { kind: 'external', ip: OUTSIDE_IP }, message: 'Dropped by egress firewall in namespace shop' });
  });

  it('follows pods as they come and go, without restarting', async () => {
    const run = watch(['--format', 'json']);
    await run.listening;
    const newcomer = { namespace: 'shop', name: 'cache', ip: '10.244.0.9', mac: '0a:58:0a:f4:00:09' };
    await node.dbs.addPod(newcomer);
    // The watch's mirror follows the database: a sample after the pod's port is in resolves to it.
    let seq = 100;
    const deadline = Date.now() + 15_000;
    while (!run.stdout().includes('"name":"cache"') && Date.now() < deadline) {
      send({ data: ping(newcomer, PODS.backend, seq++), cookie: cookieOf('isolation') });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(run.stdout()).toContain('"src":{"kind":"pod","ip":"10.244.0.9","namespace":"shop","name":"cache"');
    await node.dbs.removePod(newcomer);
    const lines = (): number => run.stdout().trimEnd().split('\n').length;
    const removed = Date.now() + 15_000;
    let lastLine = '';
    while (!lastLine.includes('"src":{"kind":"cluster","ip":"10.244.0.9"') && Date.now() < removed) {
      send({ data: ping(newcomer, PODS.backend, seq++), cookie: cookieOf('isolation') });
      await new Promise((resolve) => setTimeout(resolve, 100));
      lastLine = run.stdout().trimEnd().split('\n')[lines() - 1] ?? '';
    }
    expect(lastLine).toContain('"src":{"kind":"cluster","ip":"10.244.0.9","network":"default"}');
    expect(await run.stop('SIGINT')).toBe(0);
  });
});

describe('watch --format observ', () => {
  it("prints ovnkube-observ's lines: cookie, OVN-K message or decoding failure, src/dst and an empty line, with Go's log prefix", async () => {
    const run = watch(['--count', '2', '--format', 'observ', '--log-cookie']);
    await run.listening;
    const unknownApp = Uint8Array.from(Buffer.from('c8000001000003e9', 'hex'));
    send(...passThenDrop(8), { data: ping(PODS.frontend, PODS.db, 9), cookie: unknownApp, at: T0 + 5_000_000n });
    const { stdout } = await finished(run);
    const prefix = '2025/06/15 15:06:40.';
    expect(stdout.split('\n')).toEqual([
      `${prefix}123456 group_id=42, obs_domain=${(2 << 24) | 1}, obs_point=${ACLS_POINT('anpPass')}`,
      `${prefix}123456 OVN-K message: Delegated to network policy by admin network policy pass-monitoring, direction Ingress`,
      `${prefix}123456 src=10.244.0.6, dst=10.244.0.4`,
      '',
      `${prefix}123476 group_id=42, obs_domain=${(2 << 24) | 1}, obs_point=${ACLS_POINT('isolation')}`,
      `${prefix}123476 OVN-K message: Dropped by network policies isolation in namespace shop, direction Ingress`,
      `${prefix}123476 src=10.244.0.6, dst=10.244.0.4`,
      '',
      `${prefix}128456 group_id=42, obs_domain=${((200 << 24) | 1) >>> 0}, obs_point=1001`,
      `${prefix}128456 decoding failed: No Sampling_App has id 200: not an OVN sample, or sampling apps were reconfigured.`,
      `${prefix}128456 src=10.244.0.3, dst=10.244.0.5`,
      '',
      '',
    ]);
  });

  it('--print-full-packet prints every layer', async () => {
    const run = watch(['--count', '1', '--format', 'observ', '--print-full-packet']);
    await run.listening;
    send({
      data: tcpSyn({ src: PODS.frontend.ip, dst: PODS.backend.ip, srcPort: 40000, dstPort: 8080 }),
      cookie: cookieOf('allowFrontend'),
    });
    const { stdout } = await finished(run);
    expect(stdout).toMatch(
      /OVN-K message: Allowed by network policy allow-frontend in namespace shop, direction Ingress\n.* PACKET: 54 bytes, wire length 54 cap length 54\n- Layer 1 = Ethernet\t\{dst=0a:58:0a:f4:00:04 src=0a:58:0a:f4:00:03 vlans=\[\]\}\n- Layer 2 = IPV4\t\{.*src=10\.244\.0\.3 dst=10\.244\.0\.4\}\n- Layer 3 = TCP\t\{srcPort=40000 dstPort=8080 .*flags=\[SYN\].*\}\n\n$/,
    );
  });
});

function ACLS_POINT(name: keyof typeof ACLS): number {
  return Buffer.from(cookieOf(name)).readUInt32BE(4);
}

describe('watch filters', () => {
  /** One packet of each kind, 1 ms apart: what each filter lets through is asserted by its verdict chain's first policy. */
  const mix = (): Sample[] => [
    ...passThenDrop(20, T0),
    {
      data: tcpSyn({ src: PODS.frontend.ip, dst: PODS.backend.ip, srcPort: 40000, dstPort: 8080 }),
      cookie: cookieOf('allowFrontend'),
      at: T0 + 1_000_000n,
    },
    {
      data: udp({ src: PODS.frontend.ip, dst: OUTSIDE_IP, srcPort: 5353, dstPort: 53 }),
      cookie: cookieOf('egressFirewall'),
      at: T0 + 2_000_000n,
    },
    { data: ping(PODS.frontend, PODS.db, 21), cookie: cookieOf('isolation'), at: T0 + 3_000_000n },
    { data: ping(PODS.frontend, PODS.backend, 22), cookie: cookieOf('allowFrontend', 'acl-est'), at: T0 + 4_000_000n },
  ];
  it.each([
    [['--src', 'tenant-b/client'], ['anp:pass-monitoring']],
    [
      ['--src', 'shop/', '--dst', '10.244.0.0/24'],
      ['np:shop/allow-frontend', 'isolation:shop', 'np:shop/allow-frontend'],
    ],
    [['--dst', '172.18.0.0/16'], ['egress-firewall:shop']],
    [
      ['--port', '53', '--port', '8080'],
      ['np:shop/allow-frontend', 'egress-firewall:shop'],
    ],
    [['--proto', 'udp'], ['egress-firewall:shop']],
    [['--proto', 'icmp', '--dst', 'shop/db'], ['isolation:shop']],
    [['--namespace', 'tenant-b'], ['anp:pass-monitoring']],
    [['--policy', 'pass-monitoring'], ['anp:pass-monitoring']],
    [
      ['--policy', 'shop/allow-frontend'],
      ['np:shop/allow-frontend', 'np:shop/allow-frontend'],
    ],
    [
      ['--action', 'drop'],
      ['anp:pass-monitoring', 'egress-firewall:shop', 'isolation:shop'],
    ],
    [['--action', 'pass'], ['anp:pass-monitoring']],
    [['--app', 'acl-est'], ['np:shop/allow-frontend']],
  ])('%j shows only what it matches', async (filter, firstPolicies) => {
    const run = watch(['--format', 'json', ...filter]);
    await run.listening;
    send(...mix());
    await run.logged(() => false, 'nothing', 0).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await run.stop('SIGTERM')).toBe(0);
    const shown = jsonLines<{ chain: { policy: string }[] }>(run.stdout()).map((line) => line.chain[0]!.policy);
    expect(shown).toEqual(firstPolicies);
    const summary = await run.logged((record) => String(record.msg).startsWith('summary'), 'the summary');
    expect(summary).toMatchObject({ packets: 5, shown: firstPolicies.length, filtered: 5 - firstPolicies.length });
  });

  it.each([
    [['--action', 'maybe'], /--action maybe: use allow, drop, pass, reject/],
    [['--src', 'not-an-address'], /--src not-an-address: give an address, a CIDR \(10\.0\.0\.0\/8\) or a pod as namespace\/name/],
    [['--proto', 'gre2'], /--proto gre2: use tcp, udp, sctp, icmp, icmpv6, arp or an IP protocol number/],
    [['--port', '70000'], /--port 70000: give a whole number from 0 to 65535/],
    [['--log-cookie'], /--log-cookie and --print-full-packet shape the observ format/],
  ])('a wrong filter %j exits 2 before anything is opened', async (args, message) => {
    const run = watch(args);
    expect(await run.exited).toBe(2);
    expect(run.stderr()).toMatch(message);
    expect(run.records().some((record) => String(record.msg).startsWith('listening'))).toBe(false);
  });
});

describe('watch accounting and lifecycle', () => {
  it('Ctrl-C prints what was shown, then the summary: received, shown, kernel/queue drops, malformed, unknown and stale cookies', async () => {
    const outDir = mkdtempSync(join(tmpdir(), 'ovnps-watch-'));
    const output = join(outDir, 'events.txt');
    const run = watch(['--output', output]);
    await run.listening;
    const stale = Uint8Array.from(Buffer.from('0200000112345678', 'hex'));
    send(
      ...passThenDrop(30),
      { data: ping(PODS.frontend, PODS.db, 31), cookie: stale, at: T0 + 1_000_000n },
      { data: ping(PODS.frontend, PODS.db, 32), at: T0 + 2_000_000n },
    );
    node.injector.send(Uint8Array.from([16, 0, 0, 0, 34, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])); // a header-only message: malformed
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await run.stop('SIGINT')).toBe(0);
    expect(run.stdout()).toBe('');
    const lines = readFileSync(output, 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(/ \? +stale +shop +shop\/frontend → shop\/db .*Stale sample \(sample-not-found\)$/);
    // Without a cookie there is no datapath: 10.244.0.3 is a pod on two networks, so it stays unnamed.
    expect(lines[2]).toMatch(/ \? +unknown +shop +10\.244\.0\.3 \(cluster\) → shop\/db .*Unknown sample \(not-ovn-cookie\)$/);
    const summary = await run.logged((record) => String(record.msg).startsWith('summary'), 'the summary');
    expect(summary).toMatchObject({
      received: 4,
      packets: 3,
      shown: 3,
      filtered: 0,
      kernelDrops: 0,
      queueDrops: 0,
      malformed: 1,
      decoded: 2,
      staleCookies: { 'sample-not-found': 1 },
      unknownCookies: { 'not-ovn-cookie': 1 },
    });
    expect(summary.msg).toBe(
      'summary: 4 samples received (3 packets), 3 shown, 0 filtered out; dropped 0 in the kernel and 0 in the queue, 0 unread at exit; 0 psample family gap(s); 1 malformed; cookies: 2 decoded, 1 unknown, 1 stale',
    );
    expect(run.records().find((record) => record.signal === 'SIGINT')).toMatchObject({ msg: 'SIGINT: stopping' });
  });

  it('--duration stops by itself; logs never reach stdout', async () => {
    const run = watch(['--duration', '1', '--format', 'json']);
    await run.listening;
    expect(await run.exited).toBe(0);
    expect(run.stdout()).toBe('');
    expect(run.records().map((record) => record.msg)).toContain('OVN databases synced');
  });

  it('a reader of stdout that goes away (| head -1) ends the watch cleanly, with its summary', async () => {
    const run = watch(['--format', 'json']);
    await run.listening;
    send({ data: ping(PODS.frontend, PODS.backend, 50), cookie: cookieOf('allowFrontend') });
    await new Promise<void>((resolve) => run.child.stdout!.once('data', () => resolve()));
    run.child.stdout!.destroy();
    for (let seq = 51; seq < 60 && run.child.exitCode === null; seq++) {
      send({ data: ping(PODS.frontend, PODS.backend, seq), cookie: cookieOf('allowFrontend') });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await run.exited).toBe(0);
    expect(run.records().map((record) => record.msg)).toEqual(
      expect.arrayContaining(['the output was closed; stopping', expect.stringMatching(/^summary: /)]),
    );
  });

  it('--no-enrich shows cookies without OVN', async () => {
    const run = startCli(injectedSourceArgs('watch', ns.name, GROUP, ['--no-enrich', '--count', '1']));
    await run.listening;
    send({ data: ping(PODS.frontend, PODS.backend, 40), cookie: cookieOf('allowFrontend') });
    expect(await run.exited).toBe(0);
    expect(run.stdout()).toMatch(/ \? +- +- +10\.244\.0\.3 → 10\.244\.0\.4 +ICMP .*app 2 datapath 1 point \d+$/m);
  });

  it('fails at once, the cause named, when the named OVN database is not there (exit 1)', async () => {
    const run = startCli(injectedSourceArgs('watch', ns.name, GROUP, ['--nb', 'unix:/nonexistent/nb.sock']));
    expect(await run.exited).toBe(1);
    const fatal = run.records().find((record) => record.level === 60);
    expect(fatal).toMatchObject({
      code: 'OVSDB_CONNECTION',
      msg: expect.stringMatching(/No OVN northbound database at unix:\/nonexistent\/nb\.sock/),
    });
  });
});
