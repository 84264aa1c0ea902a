import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, closeSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Real ovsdb-server processes for tests (Debian's openvswitch-common). Every process and temp dir
 * is registered so that it is removed at process exit even when a test fails before its cleanup.
 */
const liveProcesses = new Set<ChildProcess>();
const liveDirs = new Set<string>();
process.once('exit', () => {
  for (const child of liveProcesses) {
    child.kill('SIGKILL');
  }
  for (const dir of liveDirs) {
    rmSync(dir, { recursive: true, force: true });
  }
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  liveDirs.add(dir);
  return dir;
}

function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  liveDirs.delete(dir);
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

/** The RFC 7047 database name inside an .ovsschema file. */
export function schemaDatabaseName(schemaPath: string): string {
  return (JSON.parse(readFileSync(schemaPath, 'utf8')) as { name: string }).name;
}

export interface Pki {
  readonly caCert: string;
  readonly serverKey: string;
  readonly serverCert: string;
  readonly clientKey: string;
  readonly clientCert: string;
  /** A CA that signed nothing here: a client trusting only it must refuse the server. */
  readonly otherCaCert: string;
}

/** Makes a throwaway PKI with openssl: one CA signing a server and a client certificate, and a stranger CA. */
export async function makePki(dir: string): Promise<Pki> {
  const openssl = (...args: string[]) => run('openssl', args, { cwd: dir });
  const pki: Pki = {
    caCert: join(dir, 'ca.pem'),
    serverKey: join(dir, 'server.key'),
    serverCert: join(dir, 'server.pem'),
    clientKey: join(dir, 'client.key'),
    clientCert: join(dir, 'client.pem'),
    otherCaCert: join(dir, 'other-ca.pem'),
  };
  await openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    pki.caCert,
    '-days',
    '2',
    '-subj',
    '/CN=ovn-psample test CA',
  );
  await openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'other-ca.key',
    '-out',
    pki.otherCaCert,
    '-days',
    '2',
    '-subj',
    '/CN=ovn-psample stranger CA',
  );
  writeFileSync(join(dir, 'leaf.ext'), 'basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost\n');
  for (const name of ['server', 'client']) {
    await openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      `/CN=ovn-psample test ${name}`,
    );
    await openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      pki.caCert,
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-extfile',
      'leaf.ext',
    );
  }
  return pki;
}

async function waitForSocket(target: { path: string } | { port: number; host: string }, child: ChildProcess, log: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`ovsdb-server exited (${child.exitCode ?? child.signalCode}) during start-up:\n${readLog(log)}`);
    }
    const connected = await new Promise<boolean>((resolve) => {
      const socket = connect(target as never);
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (connected) {
      return;
    }
    if (Date.now() > deadline) {
      throw new Error(`ovsdb-server did not listen on ${JSON.stringify(target)} within 20 s:\n${readLog(log)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function readLog(path: string): string {
  try {
    return readFileSync(path, 'utf8').slice(-4000);
  } catch {
    return '(no log)';
  }
}

interface ProcessSpec {
  readonly dir: string;
  readonly name: string;
  readonly dbPath: string;
  readonly tcpPort: number;
  readonly sslPort?: number;
  readonly pki?: Pki;
  /** Also listen on [::1] at this port. */
  readonly ipv6Port?: number;
}

/** One ovsdb-server child process serving one database file on unix, tcp and optionally ssl. */
export class OvsdbServerProcess {
  readonly unixPath: string;
  readonly ctlPath: string;
  readonly logPath: string;
  private child: ChildProcess | undefined;

  constructor(private readonly spec: ProcessSpec) {
    this.unixPath = join(spec.dir, `${spec.name}.sock`);
    this.ctlPath = join(spec.dir, `${spec.name}.ctl`);
    this.logPath = join(spec.dir, `${spec.name}.log`);
  }

  get unixRemote(): string {
    return `unix:${this.unixPath}`;
  }

  get tcpRemote(): string {
    return `tcp:127.0.0.1:${this.spec.tcpPort}`;
  }

  get sslRemote(): string {
    if (this.spec.sslPort === undefined) {
      throw new Error('This server was started without ssl.');
    }
    return `ssl:127.0.0.1:${this.spec.sslPort}`;
  }

  get ipv6Remote(): string {
    if (this.spec.ipv6Port === undefined) {
      throw new Error('This server was started without ipv6.');
    }
    return `tcp:[::1]:${this.spec.ipv6Port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts (or restarts) the process and waits until its unix and tcp listeners accept. */
  async start(): Promise<void> {
    const { spec } = this;
    const args = [
      spec.dbPath,
      `--remote=punix:${this.unixPath}`,
      `--remote=ptcp:${spec.tcpPort}:127.0.0.1`,
      `--unixctl=${this.ctlPath}`,
      `--log-file=${this.logPath}`,
      '-vconsole:off',
      '-vfile:info',
    ];
    if (spec.sslPort !== undefined && spec.pki !== undefined) {
      args.push(
        `--remote=pssl:${spec.sslPort}:127.0.0.1`,
        `--private-key=${spec.pki.serverKey}`,
        `--certificate=${spec.pki.serverCert}`,
        `--ca-cert=${spec.pki.caCert}`,
      );
    }
    if (spec.ipv6Port !== undefined) {
      args.push(`--remote=ptcp:${spec.ipv6Port}:[::1]`);
    }
    const stderr = openSync(join(spec.dir, `${spec.name}.stderr`), 'a');
    // pdeathsig: the server dies with this test process even when that is killed outright.
    const child = spawn('setpriv', ['--pdeathsig', 'KILL', 'ovsdb-server', ...args], { stdio: ['ignore', 'ignore', stderr] });
    closeSync(stderr);
    liveProcesses.add(child);
    child.once('exit', () => liveProcesses.delete(child));
    this.child = child;
    await waitForSocket({ path: this.unixPath }, child, this.logPath);
    await waitForSocket({ host: '127.0.0.1', port: spec.tcpPort }, child, this.logPath);
  }

  /** Sends `signal` and waits for the process to exit (SIGKILL simulates a crash). */
  async kill(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (child === undefined || !this.running) {
      return;
    }
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }

  async appctl(...args: string[]): Promise<string> {
    const { stdout } = await run('ovs-appctl', ['-t', this.ctlPath, ...args]);
    return stdout;
  }
}

/** A standalone ovsdb-server on a fresh database created from `schemaPath`. */
export class OvsdbServer extends OvsdbServerProcess {
  readonly dir: string;
  readonly database: string;
  readonly pki: Pki | undefined;

  private constructor(spec: ProcessSpec, database: string) {
    super(spec);
    this.dir = spec.dir;
    this.database = database;
    this.pki = spec.pki;
  }

  /** `ssl`: true makes a PKI of its own; a Pki lets several servers share one (as the NB and SB of a node do). */
  static async start(options: { schema: string; ssl?: boolean | Pki; ipv6?: boolean }): Promise<OvsdbServer> {
    const dir = tempDir('ovn-psample-ovsdb-');
    try {
      const dbPath = join(dir, 'db');
      await run('ovsdb-tool', ['create', dbPath, options.schema]);
      const pki = options.ssl === true ? await makePki(dir) : options.ssl === false ? undefined : options.ssl;
      const spec: ProcessSpec = {
        dir,
        name: 'server',
        dbPath,
        tcpPort: await freePort(),
        ...(pki === undefined ? {} : { pki, sslPort: await freePort() }),
        ...(options.ipv6 === true ? { ipv6Port: await freePort() } : {}),
      };
      const server = new OvsdbServer(spec, schemaDatabaseName(options.schema));
      await server.start();
      return server;
    } catch (error) {
      removeDir(dir);
      throw error;
    }
  }

  /** The database file, for offline changes with `ovsdb-tool transact` while the server is down. */
  get dbPath(): string {
    return join(this.dir, 'db');
  }

  /** Kills the process and removes every file it used. */
  async stop(): Promise<void> {
    await this.kill('SIGKILL');
    removeDir(this.dir);
  }
}

/** An ovsdb-server relaying `database` from `source` (relay:DB:REMOTE), e.g. one whose source is down. */
export class OvsdbRelay extends OvsdbServerProcess {
  readonly dir: string;

  private constructor(spec: ProcessSpec) {
    super(spec);
    this.dir = spec.dir;
  }

  static async start(options: { database: string; source: string }): Promise<OvsdbRelay> {
    const dir = tempDir('ovn-psample-relay-');
    try {
      const relay = new OvsdbRelay({
        dir,
        name: 'relay',
        dbPath: `relay:${options.database}:${options.source}`,
        tcpPort: await freePort(),
      });
      await relay.start();
      return relay;
    } catch (error) {
      removeDir(dir);
      throw error;
    }
  }

  async stop(): Promise<void> {
    await this.kill('SIGKILL');
    removeDir(this.dir);
  }
}

/** The number of monitors the server holds for all its clients (ovs-appctl memory/show). */
export async function serverMonitorCount(server: OvsdbServerProcess): Promise<number> {
  const match = /monitors:(\d+)/.exec(await server.appctl('memory/show'));
  return match === null ? 0 : Number(match[1]);
}

export interface ClusterMember extends OvsdbServerProcess {
  readonly index: number;
}

/** A 3-member (by default) raft cluster made with ovsdb-tool create-cluster / join-cluster on 127.0.0.1. */
export class OvsdbCluster {
  readonly dir: string;
  readonly database: string;
  readonly members: readonly ClusterMember[];

  private constructor(dir: string, database: string, members: ClusterMember[]) {
    this.dir = dir;
    this.database = database;
    this.members = members;
  }

  /** The members' tcp client remotes, comma-separated as ovn-nbctl takes them. */
  get remotes(): string {
    return this.members.map((member) => member.tcpRemote).join(',');
  }

  static async start(options: { schema: string; size?: number }): Promise<OvsdbCluster> {
    const dir = tempDir('ovn-psample-cluster-');
    const members: ClusterMember[] = [];
    try {
      const database = schemaDatabaseName(options.schema);
      const size = options.size ?? 3;
      const raftAddresses: string[] = [];
      for (let index = 0; index < size; index++) {
        raftAddresses.push(`tcp:127.0.0.1:${await freePort()}`);
      }
      for (let index = 0; index < size; index++) {
        const dbPath = join(dir, `db${index}`);
        if (index === 0) {
          await run('ovsdb-tool', ['create-cluster', dbPath, options.schema, raftAddresses[0]!]);
        } else {
          await run('ovsdb-tool', ['join-cluster', dbPath, database, raftAddresses[index]!, ...raftAddresses.slice(0, index)]);
        }
        const member = Object.assign(new OvsdbServerProcess({ dir, name: `member${index}`, dbPath, tcpPort: await freePort() }), { index });
        members.push(member);
      }
      await Promise.all(members.map((member) => member.start()));
      const cluster = new OvsdbCluster(dir, database, members);
      await cluster.waitUntil(async () => {
        const statuses = await Promise.all(members.map((member) => cluster.status(member)));
        return (
          statuses.every((status) => status.includes('Status: cluster member')) && statuses.some((status) => /Role: leader/.test(status))
        );
      }, 'all members joined with a leader elected');
      return cluster;
    } catch (error) {
      await Promise.all(members.map((member) => member.kill('SIGKILL')));
      removeDir(dir);
      throw error;
    }
  }

  /** `ovs-appctl cluster/status` of one member ('' when it does not answer). */
  async status(member: ClusterMember): Promise<string> {
    if (!member.running) {
      return '';
    }
    return member.appctl('cluster/status', this.database).catch(() => '');
  }

  /** The running member that reports itself leader, waiting for an election if needed. */
  async leader(): Promise<ClusterMember> {
    let leader: ClusterMember | undefined;
    await this.waitUntil(async () => {
      for (const member of this.members) {
        if (/Role: leader/.test(await this.status(member))) {
          leader = member;
          return true;
        }
      }
      return false;
    }, 'a leader');
    return leader!;
  }

  async stop(): Promise<void> {
    await Promise.all(this.members.map((member) => member.kill('SIGKILL')));
    removeDir(this.dir);
  }

  private async waitUntil(condition: () => Promise<boolean>, what: string): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (!(await condition())) {
      if (Date.now() > deadline) {
        const logs = this.members.map((member) => `--- ${member.logPath}\n${readLog(member.logPath)}`).join('\n');
        throw new Error(`The ovsdb cluster did not reach "${what}" within 30 s:\n${logs}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
