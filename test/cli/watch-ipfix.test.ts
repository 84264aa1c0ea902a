// watch, top and listen with --source ipfix|auto, fed by Debian 12's Open vSwitch 3.1 as a real
// IPFIX exporter (userspace, dummy datapath: no psample) whose flows carry OVN-Kubernetes'
// cookies, decoded through real NB/SB databases; and watch --add-ovs-collector attaching its own
// IPFIX row to that OVS, removing it at exit, and taking over the row of a killed watch.
import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { formatCookieHex } from '../../src/ovn/cookie';
import { haveOvsVswitchd, OvsExporter } from '../ipfix/support/ovs-exporter';
import { sampleMetadataOf, OVNK_SAMPLING_APP_IDS } from '../ovn/support/ovnk-fixtures';
import { startNodeOvs, type NodeOvs } from '../ovs/support/ovs-database';
import { jsonLines, message, startCli, type CliProcess } from '../support/cli';
import { ACLS, DEFAULT_KEY, PODS, startOvnkNodeDatabases, type AclName, type OvnkNodeDatabases, type Pod } from './support/ovnk-node';

const root = process.getuid?.() === 0;
const DOMAIN = ((OVNK_SAMPLING_APP_IDS['acl-new'] << 24) | DEFAULT_KEY) >>> 0;
const point = (acl: AclName): number => sampleMetadataOf(ACLS[acl]);
/** OVS's probability for 50 %: each record then stands for 65535 / 32767 = 2 packets (packetDeltaCount). */
const HALF = 32767;
const HALF_WEIGHT = 2;
/** Pings sampled at 50 %: none of them sampled has a chance of 2^-20. */
const HALF_PINGS = 20;

/** A UDP port nobody listens on now. */
async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(resolve));
  return port;
}

/** An ICMP echo request from `from` to `to`, as ovs-appctl netdev-dummy/receive takes it, entering by p1. */
function ping(from: Pod, to: Pod, ttl = 64): string {
  return (
    `in_port(1),eth(src=${from.mac},dst=${to.mac}),eth_type(0x0800),` +
    `ipv4(src=${from.ip},dst=${to.ip},proto=1,tos=0,ttl=${ttl},frag=no),icmp(type=8,code=0)`
  );
}

const listeningIpfix = (run: CliProcess): Promise<Record<string, unknown>> =>
  run.logged(message(/^listening for OVS IPFIX/), 'the IPFIX socket bound');

/** The sum of a Prometheus text's samples of `name` (every label set). */
function metricSum(text: string, name: string): number {
  let sum = 0;
  for (const match of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))) sum += Number(match[1]);
  return sum;
}

async function until(condition: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.skipIf(!root || !haveOvsVswitchd())('--source ipfix with OVS 3.1 exporting OVN cookies', () => {
  let ovs: OvsExporter;
  let dbs: OvnkNodeDatabases;

  beforeAll(async () => {
    [ovs, dbs] = await Promise.all([OvsExporter.start(), startOvnkNodeDatabases()]);
    // As OVN's pipeline samples a packet of tenant-b/client to shop/backend: the ANP passes it, the
    // namespace isolation drops it; shop/frontend's is allowed by its policy. One sample action each.
    const sample = (acl: AclName): string =>
      `sample(probability=65535,collector_set_id=42,obs_domain_id=${DOMAIN},obs_point_id=${point(acl)})`;
    await ovs.ofctl(
      'add-flow',
      'br0',
      `table=0,priority=20,in_port=1,ip,nw_src=${PODS.client.ip},actions=${sample('anpPass')},${sample('isolation')}`,
    );
    await ovs.ofctl(
      'add-flow',
      'br0',
      `table=0,priority=20,in_port=1,ip,nw_src=${PODS.frontend.ip},actions=${sample('allowFrontend')},output:2`,
    );
    // shop/db's packets sampled at probability 50 %, as an OVN Sample with probability 32767 would.
    await ovs.ofctl(
      'add-flow',
      'br0',
      `table=0,priority=20,in_port=1,ip,nw_src=${PODS.db.ip},actions=sample(probability=${HALF},collector_set_id=42,obs_domain_id=${DOMAIN},obs_point_id=${point('allowFrontend')}),output:2`,
    );
  });
  afterAll(async () => {
    await ovs?.stop();
    await dbs?.stop();
  });

  const ovn = (): string[] => ['--nb', dbs.nb.unixRemote, '--sb', dbs.sb.unixRemote];
  const cli = (command: string, args: readonly string[]): CliProcess =>
    startCli([command, ...ovn(), '--log-format', 'json', ...args], { env: { TZ: 'UTC' } });

  describe('an exporter pointed at the watch', () => {
    let port: number;
    beforeEach(async () => {
      port = await freeUdpPort();
      await ovs.exportTo(`127.0.0.1:${port}`);
    });

    it('watch --source ipfix --format json: one line per packet, its verdict chain decoded through OVN, no packet bytes', async () => {
      const run = cli('watch', ['--source', 'ipfix', '--ipfix-listen', `127.0.0.1:${port}`, '--format', 'json', '--count', '2']);
      await listeningIpfix(run);
      await ovs.receive('p1', ping(PODS.client, PODS.backend));
      await ovs.receive('p1', ping(PODS.frontend, PODS.backend));
      expect(await run.exited).toBe(0);
      const lines = jsonLines(run.stdout());
      expect(lines).toEqual([
        expect.objectContaining({
          verdict: 'drop',
          src: expect.objectContaining({ kind: 'pod', namespace: 'tenant-b', name: 'client', ip: PODS.client.ip }),
          dst: expect.objectContaining({ kind: 'pod', namespace: 'shop', name: 'backend', ip: PODS.backend.ip }),
          chain: [
            expect.objectContaining({ verdict: 'pass', policy: 'anp:pass-monitoring', obsDomainId: DOMAIN, obsPointId: point('anpPass') }),
            expect.objectContaining({ verdict: 'drop', policy: 'isolation:shop', obsDomainId: DOMAIN, obsPointId: point('isolation') }),
          ],
          source: 'ipfix',
          exporter: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
          weight: 1,
          interface: 'p1',
          cookie: formatCookieHex({ obsDomainId: DOMAIN, obsPointId: point('anpPass') }),
          samples: 2,
          rate: 0xffffffff,
          probability: true,
        }),
        expect.objectContaining({
          verdict: 'allow',
          src: expect.objectContaining({ name: 'frontend' }),
          chain: [expect.objectContaining({ verdict: 'allow', policy: 'np:shop/allow-frontend' })],
          source: 'ipfix',
          samples: 1,
        }),
      ]);
      // IPFIX exports fields, not bytes: no packet is invented.
      for (const line of lines) expect(line).not.toHaveProperty('packet');
      const summary = run.records().find((record) => String(record.msg).startsWith('summary:'))!;
      expect(summary).toMatchObject({ source: 'ipfix', received: 3, records: 3, packets: 2, shown: 2, malformed: 0, sequenceLost: 0 });
      expect(String(summary.msg)).toMatch(/^summary: 3 IPFIX records received \(2 packets\), 2 shown/);
    });

    it('watch --source ipfix: the human line names the verdict, the policies, the pods and the OVS interface', async () => {
      const run = cli('watch', ['--source', 'ipfix', '--ipfix-listen', `127.0.0.1:${port}`, '--count', '1']);
      await listeningIpfix(run);
      await ovs.receive('p1', ping(PODS.client, PODS.backend));
      expect(await run.exited).toBe(0);
      const line = run.stdout().trim();
      expect(line).toMatch(/^\d\d:\d\d:\d\d\.\d{6} {2}DROP {2}/);
      expect(line).toContain('anp:pass-monitoring→isolation:shop');
      expect(line).toContain('tenant-b/client → shop/backend');
      // The tuple is rendered from packet bytes, which IPFIX does not carry.
      expect(line).toMatch(/ {2}- {2}p1 {2}/);
      expect(line).toContain('Delegated by admin network policy pass-monitoring');
    });

    it('top --source ipfix --once counts the packets of each verdict', async () => {
      const run = cli('top', ['--source', 'ipfix', '--ipfix-listen', `127.0.0.1:${port}`, '--once', '--window', '4']);
      await listeningIpfix(run);
      for (let i = 0; i < 3; i++) await ovs.receive('p1', ping(PODS.client, PODS.backend, 64 - i));
      await ovs.receive('p1', ping(PODS.frontend, PODS.backend));
      expect(await run.exited).toBe(0);
      const screen = run.stdout();
      expect(screen).toContain('4 packets in the window; 7 IPFIX records received, 0 lost, 0 malformed');
      expect(screen).toMatch(/\s3\s+\S+ ago\s+DROP\s+anp:pass-monitoring→isolation:shop\s+shop\s+tenant-b\/client → shop\/backend\n/);
      expect(screen).toMatch(/\s1\s+\S+ ago\s+ALLOW\s+np:shop\/allow-frontend\s+shop\s+shop\/frontend → shop\/backend\n/);
    });

    it('--drop-privileges: once the IPFIX socket is bound, every capability is given up, and records still come', async () => {
      const run = cli('watch', ['--source', 'ipfix', '--ipfix-listen', `127.0.0.1:${port}`, '--drop-privileges', '--count', '1']);
      await listeningIpfix(run);
      await run.logged(message(/^privileges dropped: uid 0 /), 'the privileges dropped');
      expect(readFileSync(`/proc/${run.child.pid}/status`, 'latin1')).toMatch(/^CapEff:\s+0000000000000000$/m);
      await ovs.receive('p1', ping(PODS.frontend, PODS.backend));
      expect(await run.exited).toBe(0);
      expect(run.stdout()).toContain('ALLOW');
    });

    it('listen --source ipfix: one line per record, the cookie decoded', async () => {
      const run = cli('listen', ['--source', 'ipfix', '--ipfix-listen', `127.0.0.1:${port}`, '--format', 'text', '--count', '2']);
      await listeningIpfix(run);
      await ovs.receive('p1', ping(PODS.client, PODS.backend));
      expect(await run.exited).toBe(0);
      const lines = run.stdout().trim().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(
        new RegExp(
          `^exporter=127\\.0\\.0\\.1:\\d+ in=p1 app=2 dp=1 point=${point('anpPass')} 10\\.244\\.0\\.6 > 10\\.244\\.0\\.4 ICMP type=8 code=0 weight=1 \\| .*pass-monitoring`,
        ),
      );
      expect(lines[1]).toContain(`point=${point('isolation')}`);
    });

    it('--metrics: the IPFIX counts as Prometheus metrics, from the one list', async () => {
      const metricsPort = await freeUdpPort();
      const run = cli('watch', ['--source', 'ipfix', '--ipfix-listen', `127.0.0.1:${port}`, '--metrics', `127.0.0.1:${metricsPort}`]);
      await listeningIpfix(run);
      await ovs.receive('p1', ping(PODS.frontend, PODS.backend));
      await until(() => run.stdout().includes('ALLOW'), 'the line');
      const ready = await fetch(`http://127.0.0.1:${metricsPort}/readyz`);
      expect(ready.status).toBe(200);
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      expect(text).toMatch(/^ovn_psample_ipfix_records_total 1$/m);
      expect(text).toMatch(/^ovn_psample_ipfix_sequence_lost_total 0$/m);
      expect(text).toMatch(/^ovn_psample_ipfix_queued 0$/m);
      expect(text).toMatch(/^# HELP ovn_psample_ipfix_receive_buffer_drops_total IPFIX source: datagrams the kernel dropped/m);
      expect(await run.stop('SIGTERM')).toBe(0);
    });
  });

  it('usage errors name the flag: psample-only flags with --source ipfix, IPFIX flags with psample, a bad address', async () => {
    const cases: [string[], RegExp][] = [
      [['--source', 'ipfix', '--group', '42'], /--group names psample groups/],
      [['--source', 'ipfix', '--netns', '1'], /--netns: only the psample source reads it/],
      [['--ipfix-listen', '127.0.0.1:4739'], /add --source ipfix/],
      [['--source', 'ipfix', '--ipfix-listen', 'localhost:4739'], /--ipfix-listen localhost:4739: give ADDRESS:PORT/],
      [['--source', 'ipfix', '--ipfix-exporter', 'not-an-address'], /--ipfix-exporter: .*neither an IP address nor a CIDR block/],
      [['--source', 'pcap'], /--source pcap: use .* or one of psample, ipfix, auto/],
      [['--source', 'auto', '--force-ipfix'], /--force-ipfix goes with --source ipfix --add-ovs-collector/],
    ];
    for (const [args, pattern] of cases) {
      const run = startCli(['watch', ...args]);
      expect(await run.exited, args.join(' ')).toBe(2);
      expect(run.stderr()).toMatch(pattern);
    }
  });

  describe('records sampled at probability 50 %: each stands for 2 packets', () => {
    let port: number;
    beforeEach(async () => {
      port = await freeUdpPort();
      await ovs.exportTo(`127.0.0.1:${port}`);
    });

    const flowPackets = async (): Promise<number> =>
      Number(/n_packets=(\d+)/.exec(await ovs.ofctl('dump-flows', 'br0', `ip,nw_src=${PODS.db.ip}`))?.[1]);
    /** What shop/db's flow had counted before this test's pings (the flow outlives the tests). */
    let flowPacketsBefore = 0;
    beforeEach(async () => {
      flowPacketsBefore = await flowPackets();
    });

    /** Sends shop/db's pings, each another packet (its TTL), so none is grouped with another. */
    const pingsFromDb = async (): Promise<void> => {
      for (let i = 0; i < HALF_PINGS; i++) await ovs.receive('p1', ping(PODS.db, PODS.backend, 64 - i));
    };
    /**
     * Packets the exporter sampled since exportTo(), one record each: `sampled pkts` of
     * dump-ipfix-flow (its `tx pkts` counts template messages too), read once OVS counts every
     * ping through shop/db's flow, so that no sample is still on its way.
     */
    const exported = async (): Promise<number> => {
      await until(async () => (await flowPackets()) - flowPacketsBefore === HALF_PINGS, `OVS counting the ${HALF_PINGS} pings`);
      return Number(/sampled pkts=(\d+)/.exec(await ovs.ofctl('dump-ipfix-flow', 'br0'))?.[1]);
    };

    it('watch --aggregate counts the packets the records stand for, and so does ovn_psample_verdict_packets_total', async () => {
      const metricsPort = await freeUdpPort();
      const run = cli('watch', [
        '--source',
        'ipfix',
        '--ipfix-listen',
        `127.0.0.1:${port}`,
        '--aggregate',
        '3600',
        '--metrics',
        `127.0.0.1:${metricsPort}`,
      ]);
      // A watch that outlives a failed wait would hold its port and databases past the file.
      onTestFinished(() => void (run.child.exitCode === null && run.child.kill('SIGKILL')));
      await listeningIpfix(run);
      await pingsFromDb();
      const sent = await exported();
      let text = '';
      await until(async () => {
        text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        return sent > 0 && metricSum(text, 'ovn_psample_verdicts_total') === sent;
      }, 'every exported record counted as a verdict');
      expect(sent).toBeLessThan(HALF_PINGS);
      expect(metricSum(text, 'ovn_psample_ipfix_records_total')).toBe(sent);
      expect(metricSum(text, 'ovn_psample_verdict_packets_total')).toBe(HALF_WEIGHT * sent);
      expect(text).toMatch(
        new RegExp(`^ovn_psample_verdict_packets_total\\{action="allow",[^}]*policy="allow-frontend"[^}]*\\} ${HALF_WEIGHT * sent}$`, 'm'),
      );
      expect(await run.stop('SIGTERM')).toBe(0);
      const lines = jsonLines(run.stdout());
      expect(lines).toEqual([
        expect.objectContaining({ type: 'flow', verdict: 'allow', sampledPackets: sent, samples: sent, packets: HALF_WEIGHT * sent }),
        expect.objectContaining({ type: 'interval', flows: 1, sampledPackets: sent, samples: sent, packets: HALF_WEIGHT * sent }),
      ]);
    });

    it('top --once counts the packets the records stand for; its header the records received', async () => {
      // A window the 20 pings fit in on a loaded machine (each is an ovs-appctl call).
      const run = cli('top', ['--source', 'ipfix', '--ipfix-listen', `127.0.0.1:${port}`, '--once', '--window', '10']);
      onTestFinished(() => void (run.child.exitCode === null && run.child.kill('SIGKILL')));
      await listeningIpfix(run);
      await pingsFromDb();
      expect(await run.exited).toBe(0);
      const sent = await exported();
      expect(sent).toBeGreaterThan(0);
      const screen = run.stdout();
      expect(screen).toContain(`${HALF_WEIGHT * sent} packets in the window; ${sent} IPFIX records received, 0 lost, 0 malformed`);
      expect(screen).toMatch(
        new RegExp(`\\s${HALF_WEIGHT * sent}\\s+\\S+ ago\\s+ALLOW\\s+np:shop/allow-frontend\\s+shop\\s+shop/db → shop/backend\\n`),
      );
    });
  });

  describe('watch --add-ovs-collector where the datapath has no psample', () => {
    beforeEach(async () => {
      await ovs.vsctl('--', '--all', 'destroy', 'Flow_Sample_Collector_Set', '--', '--all', 'destroy', 'IPFIX');
    });

    const ipfixRows = async (): Promise<{ targets: string; externalIds: string }[]> => {
      const out = await ovs.vsctl('--format=csv', '--data=bare', '--no-headings', '--columns=targets,external_ids', 'list', 'IPFIX');
      return out === ''
        ? []
        : out.split('\n').map((line) => {
            const [targets, externalIds] = line.split(',');
            return { targets: targets!, externalIds: externalIds! };
          });
    };
    const collectorSets = async (): Promise<string> => ovs.vsctl('--columns=id,ipfix', 'list', 'Flow_Sample_Collector_Set');

    const watchAuto = (port: number, extra: readonly string[] = []): CliProcess =>
      cli('watch', [
        '--source',
        'auto',
        '--ipfix-listen',
        `127.0.0.1:${port}`,
        '--add-ovs-collector',
        '--db',
        ovs.remote,
        '--bridge',
        'br0',
        ...extra,
      ]);

    it('--source auto picks IPFIX, attaches an IPFIX row of its own, warns of the upcall cost once, and removes the row on SIGTERM', async () => {
      const port = await freeUdpPort();
      const run = watchAuto(port, ['--format', 'json']);
      await listeningIpfix(run);
      expect(run.records().find(message(/^--source auto: reading ipfix/))).toBeDefined();
      const rows = await ipfixRows();
      expect(rows).toHaveLength(1);
      expect(rows[0]!.targets).toBe(`127.0.0.1:${port}`);
      expect(rows[0]!.externalIds).toContain('owner=ovn-psample');
      expect(rows[0]!.externalIds).toContain(`ovn-psample-pid=${run.child.pid}`);
      expect(run.records().filter(message(/makes every sampled packet an upcall/))).toHaveLength(1);
      // OVS now exports set 42's samples to the watch.
      await ovs.receive('p1', ping(PODS.client, PODS.backend));
      await until(() => run.stdout().includes('"verdict":"drop"'), 'the drop line');
      expect(await run.stop('SIGTERM')).toBe(0);
      expect(await ipfixRows()).toEqual([]);
      expect(await collectorSets()).toBe('');
      expect(run.records().find(message(/^removed Flow_Sample_Collector_Set 42 on br0/))).toBeDefined();
    });

    it("a SIGKILLed watch's row is taken over by the next watch, pointed at it, and removed at its exit", async () => {
      const first = watchAuto(await freeUdpPort());
      await listeningIpfix(first);
      first.child.kill('SIGKILL');
      await first.exited;
      expect(await ipfixRows()).toHaveLength(1);
      const port = await freeUdpPort();
      const second = watchAuto(port, ['--format', 'json']);
      await listeningIpfix(second);
      const taken = second.records().find(message(/^took over the IPFIX export of Flow_Sample_Collector_Set 42 on br0/));
      expect(String(taken?.msg)).toContain(`no process ${first.child.pid} is left`);
      const rows = await ipfixRows();
      expect(rows).toHaveLength(1);
      expect(rows[0]!.targets).toBe(`127.0.0.1:${port}`);
      expect(rows[0]!.externalIds).toContain(`ovn-psample-pid=${second.child.pid}`);
      await ovs.receive('p1', ping(PODS.frontend, PODS.backend));
      await until(() => second.stdout().includes('"verdict":"allow"'), 'the allow line through the taken-over row');
      expect(await second.stop('SIGINT')).toBe(0);
      expect(await ipfixRows()).toEqual([]);
      expect(await collectorSets()).toBe('');
    });

    it('a set deleted under the watch (as ovnkube-observ does at its exit) is made again, the export resumes, and is removed at exit', async () => {
      const port = await freeUdpPort();
      const run = watchAuto(port, ['--format', 'json']);
      await listeningIpfix(run);
      await ovs.vsctl('--', '--all', 'destroy', 'Flow_Sample_Collector_Set');
      await run.logged(message(/^attached again: Flow_Sample_Collector_Set 42 on br0/), 'the export attached again');
      expect(
        run.records().find(message(/was deleted: OVS no longer exports IPFIX to 127\.0\.0\.1:\d+; attaching it again$/)),
      ).toBeDefined();
      expect((await ipfixRows()).map((row) => row.targets)).toEqual([`127.0.0.1:${port}`]);
      await ovs.receive('p1', ping(PODS.client, PODS.backend));
      await until(() => run.stdout().includes('"verdict":"drop"'), 'the drop line after the set came back');
      expect(await run.stop('SIGTERM')).toBe(0);
      expect(await ipfixRows()).toEqual([]);
      expect(await collectorSets()).toBe('');
    });

    it('the OVS database restarting under the watch: the export goes on, and the row is still removed at exit', async () => {
      const port = await freeUdpPort();
      const run = watchAuto(port, ['--format', 'json']);
      await listeningIpfix(run);
      const sessions = await ovs.databaseSessions();
      expect(sessions, 'ovs-vswitchd and the watch').toBeGreaterThanOrEqual(2);
      await ovs.restartDatabase();
      await ovs.receive('p1', ping(PODS.client, PODS.backend));
      await until(() => run.stdout().includes('"verdict":"drop"'), 'the drop line after the restart');
      // ovs-vswitchd and the watch are connected again before the watch is stopped.
      await until(async () => (await ovs.databaseSessions()) >= sessions, `${sessions} ovsdb-server sessions again`);
      expect(await run.stop('SIGTERM')).toBe(0);
      expect(await ipfixRows()).toEqual([]);
      expect(await collectorSets()).toBe('');
    });

    it('detaches only its IPFIX row from a set someone else made, and leaves the set', async () => {
      await ovs.vsctl('--', '--id=@br', 'get', 'Bridge', 'br0', '--', 'create', 'Flow_Sample_Collector_Set', 'id=42', 'bridge=@br');
      const port = await freeUdpPort();
      const run = watchAuto(port);
      await listeningIpfix(run);
      expect(run.records().find(message(/^attached IPFIX to 127\.0\.0\.1:\d+ to Flow_Sample_Collector_Set 42/))).toBeDefined();
      expect(await ipfixRows()).toHaveLength(1);
      expect(await run.stop('SIGTERM')).toBe(0);
      expect(await ipfixRows()).toEqual([]);
      expect(await collectorSets()).toMatch(/^id\s+: 42\nipfix\s+: \[\]$/);
    });
  });
});

describe.skipIf(!root)('a node whose datapath has psample: IPFIX never by default', () => {
  let node: NodeOvs;
  beforeAll(async () => {
    node = await startNodeOvs({ psample: 'true' });
  });
  afterAll(() => node?.stop());

  const ipfixRows = async (): Promise<unknown[]> => {
    const [result] = (await node.writer.transact('Open_vSwitch', [{ op: 'select', table: 'IPFIX', where: [] }])) as [{ rows: unknown[] }];
    return result.rows;
  };
  const watch = async (args: readonly string[]): Promise<CliProcess> =>
    startCli([
      'watch',
      '--no-enrich',
      '--db',
      node.remote,
      '--add-ovs-collector',
      '--log-format',
      'json',
      '--ipfix-listen',
      `127.0.0.1:${await freeUdpPort()}`,
      ...args,
    ]);

  it('--source auto reads psample there: no IPFIX row is made (this kernel has no psample, so it fails and removes its set)', async () => {
    const run = await watch(['--source', 'auto']);
    expect(await run.exited).toBe(1);
    expect(run.records().find(message(/^--source auto: reading psample\. ovs-vswitchd found the psample action/))).toBeDefined();
    expect(await ipfixRows()).toEqual([]);
    expect(await node.collectorSetRows()).toEqual([]);
  });

  it('--source ipfix --add-ovs-collector is refused there (every sample would come twice) unless --force-ipfix, which warns and cleans up', async () => {
    const refused = await watch(['--source', 'ipfix']);
    expect(await refused.exited).toBe(1);
    expect(refused.stderr()).toMatch(/OVS_IPFIX_NOT_NEEDED.*--force-ipfix/);
    expect(await ipfixRows()).toEqual([]);
    const forced = await watch(['--source', 'ipfix', '--force-ipfix']);
    await listeningIpfix(forced);
    expect(forced.records().find(message(/^--force-ipfix: ovs-vswitchd found the psample action/))).toBeDefined();
    expect(await ipfixRows()).toHaveLength(1);
    expect(await forced.stop('SIGTERM')).toBe(0);
    expect(await ipfixRows()).toEqual([]);
    expect(await node.collectorSetRows()).toEqual([]);
  });
});
