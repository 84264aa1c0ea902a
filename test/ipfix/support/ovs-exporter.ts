// Debian 12's Open vSwitch (3.1, package openvswitch-switch) as a real IPFIX exporter, in
// userspace: ovsdb-server and ovs-vswitchd --enable-dummy --disable-system under a temp dir, a
// bridge of datapath-type=dummy with dummy ports p1 and p2, flows with
// sample(collector_set_id=42,...) actions, packets injected with netdev-dummy/receive. No kernel
// module. Recipe adapted from shared/ipfix-reference/start.sh.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

const live = new Set<ChildProcess>();
const dirs = new Set<string>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

export const OVS_VSWITCHD = '/usr/sbin/ovs-vswitchd';
export const haveOvsVswitchd = (): boolean => existsSync(OVS_VSWITCHD);

async function waitFor(path: string, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (existsSync(path)) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`${what} did not create ${path}`);
}

export interface SampleFlow {
  readonly inPort: number;
  readonly match?: string;
  readonly probability?: number;
  readonly domain: number;
  readonly point: number;
  readonly egress?: boolean;
  readonly output: number;
  readonly priority?: number;
}

function spawnLive(command: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(command, args, { env, stdio: 'ignore' });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** ovsdb-server on the database in `dir`, once its socket is there. */
async function startDatabase(dir: string, env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const server = spawnLive(
    'ovsdb-server',
    [
      `--remote=punix:${join(dir, 'db.sock')}`,
      `--unixctl=${join(dir, 'ovsdb-server.ctl')}`,
      `--log-file=${join(dir, 'ovsdb-server.log')}`,
      join(dir, 'conf.db'),
    ],
    env,
  );
  await waitFor(join(dir, 'db.sock'), 'ovsdb-server');
  return server;
}

export class OvsExporter {
  readonly dir: string;
  readonly remote: string;
  readonly #env: NodeJS.ProcessEnv;
  readonly #children: ChildProcess[];

  private constructor(dir: string, children: ChildProcess[]) {
    this.dir = dir;
    this.remote = `unix:${join(dir, 'db.sock')}`;
    this.#env = { ...process.env, OVS_RUNDIR: dir, OVS_LOGDIR: dir, OVS_DBDIR: dir, OVS_SYSCONFDIR: dir };
    this.#children = children;
  }

  /** ovsdb-server and ovs-vswitchd, and bridge br0 (dummy datapath) with ports p1 (1) and p2 (2). */
  static async start(): Promise<OvsExporter> {
    const dir = mkdtempSync(join(tmpdir(), 'ovn-psample-ovs-'));
    dirs.add(dir);
    const env = { ...process.env, OVS_RUNDIR: dir, OVS_LOGDIR: dir, OVS_DBDIR: dir, OVS_SYSCONFDIR: dir };
    const db = join(dir, 'conf.db');
    await run('ovsdb-tool', ['create', db, '/usr/share/openvswitch/vswitch.ovsschema']);
    const spawnDaemon = (command: string, args: string[]): ChildProcess => spawnLive(command, args, env);
    const server = await startDatabase(dir, env);
    const exporter = new OvsExporter(dir, [server]);
    await exporter.vsctl('--no-wait', 'init');
    const vswitchd = spawnDaemon(OVS_VSWITCHD, [
      '--enable-dummy',
      '--disable-system',
      `--unixctl=${join(dir, 'ovs-vswitchd.ctl')}`,
      `--log-file=${join(dir, 'ovs-vswitchd.log')}`,
      `unix:${join(dir, 'db.sock')}`,
    ]);
    exporter.#children.push(vswitchd);
    await waitFor(join(dir, 'ovs-vswitchd.ctl'), 'ovs-vswitchd');
    await exporter.vsctl(
      'add-br',
      'br0',
      '--',
      'set',
      'bridge',
      'br0',
      'datapath-type=dummy',
      'fail-mode=secure',
      '--',
      'add-port',
      'br0',
      'p1',
      '--',
      'set',
      'Interface',
      'p1',
      'type=dummy',
      'ofport_request=1',
      '--',
      'add-port',
      'br0',
      'p2',
      '--',
      'set',
      'Interface',
      'p2',
      'type=dummy',
      'ofport_request=2',
    );
    return exporter;
  }

  /** Stops ovsdb-server and starts it again on the same database (ovs-vswitchd and clients reconnect). */
  async restartDatabase(): Promise<void> {
    const server = this.#children[0]!;
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
    this.#children[0] = await startDatabase(this.dir, this.#env);
  }

  /** The clients connected to ovsdb-server now (its memory/show "sessions"). */
  async databaseSessions(): Promise<number> {
    const { stdout } = await run('ovs-appctl', [`--target=${join(this.dir, 'ovsdb-server.ctl')}`, 'memory/show'], { env: this.#env });
    return Number(/sessions:(\d+)/.exec(stdout)?.[1] ?? 0);
  }

  async vsctl(...args: string[]): Promise<string> {
    const { stdout } = await run('ovs-vsctl', [`--db=${this.remote}`, '--timeout=20', ...args], { env: this.#env });
    return stdout.trim();
  }

  async appctl(...args: string[]): Promise<string> {
    const { stdout } = await run('ovs-appctl', [`--target=${join(this.dir, 'ovs-vswitchd.ctl')}`, ...args], { env: this.#env });
    return stdout.trim();
  }

  async ofctl(...args: string[]): Promise<string> {
    const { stdout } = await run('ovs-ofctl', args, { env: this.#env });
    return stdout.trim();
  }

  /**
   * A new IPFIX exporter for collector set 42 on br0 sending to `target` (host:port): any
   * earlier one is destroyed first, so the new one starts over (new source port, templates at
   * its first sample).
   */
  async exportTo(target: string): Promise<void> {
    await this.vsctl('--', '--all', 'destroy', 'Flow_Sample_Collector_Set', '--', '--all', 'destroy', 'IPFIX');
    await this.addCollectorSet({ ipfixTarget: target });
  }

  /**
   * Collector set 42 on br0 as another tool leaves it: exporting IPFIX to `ipfixTarget` if given,
   * with `owner` in its external_ids if given.
   */
  async addCollectorSet(set: { readonly ipfixTarget?: string; readonly owner?: string }): Promise<void> {
    const exporting = set.ipfixTarget !== undefined;
    await this.vsctl(
      ...['--', '--id=@br', 'get', 'Bridge', 'br0'],
      ...(exporting ? ['--', '--id=@i', 'create', 'IPFIX', `targets="${set.ipfixTarget}"`] : []),
      ...['--', 'create', 'Flow_Sample_Collector_Set', 'id=42', 'bridge=@br'],
      ...(exporting ? ['ipfix=@i'] : []),
      ...(set.owner === undefined ? [] : [`external_ids:owner=${set.owner}`]),
    );
  }

  /**
   * Geneve port gnv0 (ofport 3, VNI 6, remote 1.1.1.2, local 2.2.2.3) on br0, reached through
   * userspace tunnelling: bridge phy (dummy datapath, MAC aa:55:aa:55:00:00, 2.2.2.3/24) with
   * port p0, where genevePacket()'s frames are received and decapsulated into br0 by gnv0.
   */
  async addGenevePort(): Promise<void> {
    await this.vsctl(
      'add-port',
      'br0',
      'gnv0',
      '--',
      'set',
      'Interface',
      'gnv0',
      'type=geneve',
      'options:remote_ip=1.1.1.2',
      'options:local_ip=2.2.2.3',
      'options:key=6',
      'ofport_request=3',
      '--',
      'add-br',
      'phy',
      '--',
      'set',
      'bridge',
      'phy',
      'datapath-type=dummy',
      'other-config:hwaddr=aa:55:aa:55:00:00',
      '--',
      'add-port',
      'phy',
      'p0',
      '--',
      'set',
      'Interface',
      'p0',
      'type=dummy',
    );
    await this.appctl('netdev-dummy/ip4addr', 'phy', '2.2.2.3/24');
    // A route through phy makes ovs-vswitchd listen for tunnels on its address.
    await this.appctl('ovs/route/add', '2.2.2.0/24', 'phy');
    await this.ofctl('add-flow', 'phy', 'action=normal');
  }

  /** Points the existing exporter elsewhere: OVS keeps it (and its sequence) but sends from a new port. */
  async retarget(target: string): Promise<void> {
    const uuid = await this.vsctl('--columns=_uuid', '--bare', 'list', 'IPFIX');
    await this.vsctl('set', 'IPFIX', uuid, `targets="${target}"`);
  }

  async addSampleFlow(flow: SampleFlow): Promise<void> {
    const sample = [
      `probability=${flow.probability ?? 65535}`,
      'collector_set_id=42',
      `obs_domain_id=${flow.domain}`,
      `obs_point_id=${flow.point}`,
      ...(flow.egress === true ? ['egress'] : []),
    ].join(',');
    const match = [
      `table=0`,
      `priority=${flow.priority ?? 10}`,
      `in_port=${flow.inPort}`,
      ...(flow.match === undefined ? [] : [flow.match]),
    ].join(',');
    await this.ofctl('add-flow', 'br0', `${match},actions=sample(${sample}),output:${flow.output}`);
  }

  /** Injects one packet, given in ovs-appctl's datapath flow syntax, as if port `port` received it. */
  async receive(port: string, packet: string): Promise<void> {
    await this.appctl('netdev-dummy/receive', port, packet);
  }

  /**
   * A Geneve frame (VNI 6, from 1.1.1.2:50000 to 2.2.2.3:6081) for phy's p0, carrying an IPv4 UDP
   * packet 10.0.0.3:1000 -> 10.0.0.2:2000 between 50:54:00:00:00:03 and 50:54:00:00:00:02, as hex.
   */
  static genevePacket(): string {
    const checksum = (bytes: number[]): number => {
      let sum = 0;
      for (let i = 0; i < bytes.length; i += 2) sum += (bytes[i]! << 8) | (bytes[i + 1] ?? 0);
      while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
      return ~sum & 0xffff;
    };
    const u16 = (v: number): number[] => [v >> 8, v & 0xff];
    const ipv4 = (src: number[], dst: number[], payload: number[]): number[] => {
      const header = [0x45, 0, ...u16(20 + payload.length), 0, 1, 0x40, 0, 64, 17, 0, 0, ...src, ...dst];
      header.splice(10, 2, ...u16(checksum(header)));
      return [...header, ...payload];
    };
    const udp = (sport: number, dport: number, payload: number[]): number[] => [
      ...u16(sport),
      ...u16(dport),
      ...u16(8 + payload.length),
      0,
      0,
      ...payload,
    ];
    const inner = [
      0x50,
      0x54,
      0,
      0,
      0,
      2,
      0x50,
      0x54,
      0,
      0,
      0,
      3,
      0x08,
      0x00,
      ...ipv4([10, 0, 0, 3], [10, 0, 0, 2], udp(1000, 2000, [0x61, 0x62, 0x63, 0x64])),
    ];
    const geneve = [0, 0, 0x65, 0x58, 0, 0, 6, 0];
    const outer = ipv4([1, 1, 1, 2], [2, 2, 2, 3], udp(50000, 6081, [...geneve, ...inner]));
    return Buffer.from([0xaa, 0x55, 0xaa, 0x55, 0, 0, 0xf8, 0xbc, 0x12, 0x44, 0x34, 0xb6, 0x08, 0x00, ...outer]).toString('hex');
  }

  async stop(): Promise<void> {
    for (const child of this.#children.reverse()) {
      if (child.exitCode !== null) continue;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
    dirs.delete(this.dir);
  }
}
