import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { InvalidOptionError, openPsample, type PrivilegeDropReport } from '../../src/index';
import { dist } from '../support/child';
import { CTRL_CMD_DELFAMILY, CTRL_CMD_NEWFAMILY, controllerMessage } from '../support/controller';
import { fileNetns } from '../support/netns';

// Privileges are per process (and per thread): every drop happens in a child process, which
// injects its own samples through an injector opened before the drop (sending to a usersock
// group needs no capability; joining one, like psample's packets group, needs CAP_NET_ADMIN).
const FAMILY = 34;
const GROUP = 14;
const ns = fileNetns('ovnps-privileges');

interface ThreadStatus {
  tid: number;
  name: string;
  uid: number[];
  gid: number[];
  groups: string;
  inh: bigint;
  prm: bigint;
  eff: bigint;
  bnd: bigint;
  amb: bigint;
  nnp: number;
  sigBlk: bigint;
  /** Its niceness (/proc/self/task/TID/stat, field 19). */
  nice: number;
}

interface ChildOutput {
  report?: PrivilegeDropReport;
  before?: ThreadStatus[];
  after?: ThreadStatus[];
  atEnd?: ThreadStatus[];
  received?: number;
  error?: { name: string; code: string; message: string; capability?: string };
  events?: string[];
  status?: string;
  /** Threads and descriptors the process held at the end and not at the start. */
  left?: string[];
}

// The child's half: reads /proc/self/task/*/status itself, as any operator would.
const CHILD_PRELUDE = `
const fs = require('node:fs');
const { Worker } = require('node:worker_threads');
const lib = require(${JSON.stringify(dist)});
const hex = (s) => '0x' + s;
function threads() {
  return fs.readdirSync('/proc/self/task').flatMap((tid) => {
    let s;
    let stat;
    try {
      s = fs.readFileSync('/proc/self/task/' + tid + '/status', 'utf8');
      stat = fs.readFileSync('/proc/self/task/' + tid + '/stat', 'utf8');
    } catch { return []; }
    const f = (k) => s.match(new RegExp('^' + k + ':[ \\\\t]*(.*)$', 'm'))[1].trim();
    // The fields after the command's closing parenthesis start at field 3; niceness is field 19.
    const nice = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    return [{ tid: Number(tid), name: f('Name'), uid: f('Uid').split(/\\s+/).map(Number), gid: f('Gid').split(/\\s+/).map(Number),
      groups: f('Groups'), inh: hex(f('CapInh')), prm: hex(f('CapPrm')), eff: hex(f('CapEff')), bnd: hex(f('CapBnd')),
      amb: hex(f('CapAmb')), nnp: Number(f('NoNewPrivs')), sigBlk: hex(f('SigBlk')), nice }];
  });
}
// What the process holds, by identity: a thread by its tid, a descriptor by its number and what it
// points at. Not counts: Node 24 starts a thread when node:tls loads (the library's OVSDB transport
// imports it) that reads OpenSSL's CA file and then ends by itself, so under load that thread and its
// descriptor can be gone between two counts, failing a clean run or hiding a leak.
function holdings() {
  const held = new Set(fs.readdirSync('/proc/self/task').map((tid) => 'thread ' + tid));
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    // The listing's own descriptor is closed by the time it is read.
    try { held.add('fd ' + fd + ' -> ' + fs.readlinkSync('/proc/self/fd/' + fd)); } catch {}
  }
  return held;
}
// A thread that is left, named for the failure (not in its identity: a thread may name itself after it was listed).
function named(held) {
  if (!held.startsWith('thread ')) return held;
  try { return held + ' ' + fs.readFileSync('/proc/self/task/' + held.slice(7) + '/comm', 'utf8').trim(); } catch { return held; }
}
// A joined thread can still be listed in /proc for a moment: pthread_join returns once the kernel
// cleared its tid, before the thread is released. What a leak holds stays; this waits out the rest.
function leftSince(before) {
  const deadline = Date.now() + 2000;
  for (;;) {
    const left = [...holdings()].filter((held) => !before.has(held));
    if (left.length === 0 || Date.now() > deadline) return left.map(named);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
  }
}
const print = (o) => process.stdout.write(JSON.stringify(o, (k, v) => typeof v === 'bigint' ? '0x' + v.toString(16) : v));
const source = { protocol: 'usersock', familyId: ${FAMILY}, groupId: ${GROUP} };
const sample = (seq) => lib.encodePsample({ group: 3, groupSeq: seq }, { familyId: ${FAMILY} });
// Every kind of thread Node has, busy before the drop: libuv's pool, a worker, V8's platform.
async function startThreads() {
  await Promise.all(Array.from({ length: 4 }, () => new Promise((r) => require('node:crypto').pbkdf2('x', 'y', 1000, 32, 'sha256', r))));
  const worker = new Worker('setInterval(() => {}, 1000)', { eval: true });
  await new Promise((r) => worker.once('online', r));
  return worker;
}
`;

function runChild(prefix: readonly string[], body: string, node = process.execPath): Promise<ChildOutput> {
  return new Promise((resolve, reject) => {
    const [command, ...args] = [...prefix, node, '-e', CHILD_PRELUDE + body];
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      try {
        const parsed = JSON.parse(stdout, (_, v: unknown) =>
          typeof v === 'string' && /^0x[0-9a-f]+$/.test(v) ? BigInt(v) : v,
        ) as ChildOutput;
        resolve(parsed);
      } catch {
        reject(new Error(`child exited ${status}; stdout: ${stdout}; stderr: ${stderr}`));
      }
    });
  });
}

/** Opens a socket with dropPrivileges, then checks all threads and receives 3 samples injected after the drop. */
const dropAndReceive = (option: string): string => `
(async () => {
  const worker = await startThreads();
  const before = threads();
  const injector = lib.createInjector({ protocol: 'usersock', groupId: ${GROUP}, netns: ${JSON.stringify(ns.name)} });
  const socket = lib.openPsample({ netns: ${JSON.stringify(ns.name)}, source, dropPrivileges: ${option} });
  const after = threads();
  // Threads started after the drop inherit it from the thread that starts them.
  const late = new Worker('setInterval(() => {}, 1000)', { eval: true });
  await new Promise((r) => late.once('online', r));
  let received = 0;
  socket.on('sample', () => {
    if (++received < 3) return;
    print({ report: socket.privileges, before, after, atEnd: threads(), received });
    socket.close();
    worker.terminate();
    late.terminate();
  });
  for (let seq = 0; seq < 3; seq++) injector.send(sample(seq));
})().catch((e) => print({ error: { name: e.name, code: e.code, message: e.message } }));
`;

// Node's SIGUSR1 inspector watchdog blocks every signal (all real-time ones included).
const blocksEverySignal = (t: ThreadStatus): boolean => ((t.sigBlk >> 33n) & 0x7fffffffn) === 0x7fffffffn;

describe('dropPrivileges after the socket has joined (as root)', () => {
  it('{ user: "nobody" }: every thread switches to nobody with no capability, and samples keep flowing', async () => {
    const out = await runChild([], dropAndReceive("{ user: 'nobody' }"));
    expect(out.error).toBeUndefined();
    expect(out.received).toBe(3);
    expect(out.report).toMatchObject({ switchedUser: true, uid: 65534, gid: 65534, groups: [65534], boundingCleared: true });
    expect(out.before!.some((t) => t.prm !== 0n)).toBe(true);
    expect(out.after!.map((t) => t.name)).toContain('psample-reader');
    expect(out.after!.length).toBeGreaterThanOrEqual(10);
    // Root may raise a thread's priority: the reader runs 10 ahead of JavaScript, which keeps the process's.
    const main = out.after![0]!;
    expect(out.after!.find((t) => t.name === 'psample-reader')!.nice).toBe(Math.max(main.nice - 10, -20));
    expect(main.nice).toBe(out.before![0]!.nice);
    for (const t of [...out.after!, ...out.atEnd!]) {
      expect({ tid: t.tid, uid: t.uid, gid: t.gid, groups: t.groups }).toEqual({
        tid: t.tid,
        uid: [65534, 65534, 65534, 65534],
        gid: [65534, 65534, 65534, 65534],
        groups: '65534',
      });
      expect({ tid: t.tid, inh: t.inh, prm: t.prm, eff: t.eff, amb: t.amb }).toEqual({ tid: t.tid, inh: 0n, prm: 0n, eff: 0n, amb: 0n });
      if (!blocksEverySignal(t)) expect({ tid: t.tid, bnd: t.bnd, nnp: t.nnp }).toEqual({ tid: t.tid, bnd: 0n, nnp: 1 });
    }
    // Only the watchdog keeps a (bounding) set, and the report names it.
    const watchdogs = out.after!.filter(blocksEverySignal).map((t) => t.tid);
    expect(watchdogs.length).toBeLessThanOrEqual(1);
    expect(out.report!.unreachedThreads.map((t) => t.tid)).toEqual(watchdogs);
    expect(out.report!.unreachedThreads.every((t) => t.permitted === 0n)).toBe(true);
  });

  it('true: every thread that takes signals gives up every capability, the uid stays, and samples keep flowing', async () => {
    const out = await runChild([], dropAndReceive('true'));
    expect(out.error).toBeUndefined();
    expect(out.received).toBe(3);
    expect(out.report).toMatchObject({ switchedUser: false, uid: 0, gid: 0, boundingCleared: true });
    for (const t of [...out.after!, ...out.atEnd!]) {
      expect(t.uid).toEqual([0, 0, 0, 0]);
      if (blocksEverySignal(t)) continue;
      expect({ tid: t.tid, inh: t.inh, prm: t.prm, eff: t.eff, bnd: t.bnd, amb: t.amb, nnp: t.nnp }).toEqual({
        tid: t.tid,
        inh: 0n,
        prm: 0n,
        eff: 0n,
        bnd: 0n,
        amb: 0n,
        nnp: 1,
      });
    }
    // Without a user switch the kernel leaves the watchdog's sets alone: reported, not hidden.
    expect(out.report!.unreachedThreads.map((t) => t.tid)).toEqual(out.after!.filter(blocksEverySignal).map((t) => t.tid));
  });

  it('a family re-registered after the drop cannot be rejoined: gap start, then a PSAMPLE_PERMISSION error naming CAP_NET_ADMIN', async () => {
    const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
    const gone = hex(controllerMessage(CTRL_CMD_DELFAMILY, { name: 'psample', id: FAMILY, groups: { packets: GROUP } }));
    const back = hex(controllerMessage(CTRL_CMD_NEWFAMILY, { name: 'psample', id: FAMILY + 1, groups: { packets: GROUP + 1 } }));
    const out = await runChild(
      [],
      `
      const injector = lib.createInjector({ protocol: 'usersock', groupId: ${GROUP}, netns: ${JSON.stringify(ns.name)} });
      const socket = lib.openPsample({ netns: ${JSON.stringify(ns.name)}, source, dropPrivileges: { user: 'nobody' } });
      const events = [];
      socket.on('gap', (gap) => events.push('gap ' + gap.phase));
      socket.on('close', () => events.push('close'));
      socket.on('error', (e) => print({ events, error: { name: e.name, code: e.code, message: e.message, capability: e.capability } }));
      injector.send(Buffer.from('${gone}', 'hex'));
      setTimeout(() => injector.send(Buffer.from('${back}', 'hex')), 200);
    `,
    );
    expect(out.events).toEqual(['gap start', 'close']);
    expect(out.error).toMatchObject({ name: 'PsamplePermissionError', code: 'PSAMPLE_PERMISSION', capability: 'CAP_NET_ADMIN' });
    expect(out.error!.message).toMatch(
      /registered again .* rejoining its packets group needs CAP_NET_ADMIN, which this process gave up \(dropPrivileges\)/,
    );
  });

  it('from a worker thread, while other workers start: every thread of the process, and dropping again changes nothing', async () => {
    const out = await runChild(
      [],
      `
      (async () => {
        const opener = new Worker(\`
          const lib = require(${JSON.stringify(dist)});
          const { parentPort } = require('node:worker_threads');
          const socket = lib.openPsample({ netns: ${JSON.stringify(ns.name)}, source: ${JSON.stringify({ protocol: 'usersock', familyId: FAMILY, groupId: GROUP })}, dropPrivileges: { user: 'nobody' } });
          parentPort.postMessage({ threads: socket.privileges.threads, again: lib.dropPrivileges({ user: 'nobody' }) });
          socket.close();
        \`, { eval: true });
        // Threads that start while the drop runs: the rescan reaches those it missed.
        const starting = Array.from({ length: 4 }, () => new Worker('setTimeout(() => {}, 5000)', { eval: true }));
        const online = starting.map((w) => new Promise((r) => w.once('online', r)));
        const result = await new Promise((resolve, reject) => { opener.once('message', resolve); opener.once('error', reject); });
        await Promise.all(online);
        print({ report: result.again, status: String(result.threads), atEnd: threads() });
        for (const w of starting) w.terminate();
      })().catch((e) => print({ error: { name: e.name, code: e.code, message: e.message } }));
    `,
    );
    expect(out.error).toBeUndefined();
    expect(out.report).toMatchObject({ switchedUser: true, uid: 65534, boundingCleared: true });
    expect(out.report!.boundingKeptBecause).toBeUndefined();
    for (const t of out.atEnd!) {
      expect({ tid: t.tid, uid: t.uid, prm: t.prm, eff: t.eff, inh: t.inh, amb: t.amb }).toEqual({
        tid: t.tid,
        uid: [65534, 65534, 65534, 65534],
        prm: 0n,
        eff: 0n,
        inh: 0n,
        amb: 0n,
      });
      if (!blocksEverySignal(t)) expect({ tid: t.tid, bnd: t.bnd, nnp: t.nnp }).toEqual({ tid: t.tid, bnd: 0n, nnp: 1 });
    }
  });

  it('checks the option before opening anything: an unknown user is INVALID_OPTION, a group needs a user', () => {
    const source = { protocol: 'usersock', familyId: FAMILY, groupId: GROUP } as const;
    expect(() => openPsample({ netns: ns.name, source, dropPrivileges: { group: 'nogroup' } })).toThrow(
      /dropPrivileges.group needs dropPrivileges.user/,
    );
    expect(() => openPsample({ netns: ns.name, source, dropPrivileges: { user: 'a b' } })).toThrow(InvalidOptionError);
  });

  it('an unknown user or uid 0 fails with INVALID_OPTION and leaves no socket, no privilege lost', async () => {
    const out = await runChild(
      [],
      `
      const before = holdings();
      const errors = [];
      for (const user of ['no-such-user-ovnps', 0]) {
        try { lib.openPsample({ netns: ${JSON.stringify(ns.name)}, source, dropPrivileges: { user } }); }
        catch (e) { errors.push(e.code + ': ' + e.message); }
      }
      print({ events: errors, left: leftSince(before), status: String(BigInt(threads()[0].prm) !== 0n) });
    `,
    );
    expect(out.events).toEqual([
      expect.stringMatching(/^INVALID_OPTION: dropPrivileges.user: there is no user 'no-such-user-ovnps'/),
      expect.stringMatching(/^INVALID_OPTION: dropPrivileges.user: uid 0 keeps root's privileges/),
    ]);
    // Each open made a socket and a reader thread before the check failed: neither is left.
    expect(out.left).toEqual([]);
    expect(out.status).toBe('true');
  });
});

describe('least privilege: CAP_NET_ADMIN alone (setpriv, inside the namespace)', () => {
  /** setpriv as nobody: `caps` (",+net_admin" or "") inherited and ambient, `bounding` its bounding set. */
  const asNobody = (caps: string, bounding = caps): string[] => [
    'ip',
    'netns',
    'exec',
    ns.name,
    'setpriv',
    '--reuid=65534',
    '--regid=65534',
    '--clear-groups',
    `--inh-caps=-all${caps}`,
    `--ambient-caps=-all${caps}`,
    `--bounding-set=-all${bounding}`,
  ];
  const openAndReceive = (option: string): string => `
    (async () => {
      const injector = lib.createInjector({ protocol: 'usersock', groupId: ${GROUP} });
      const before = threads();
      let socket;
      try { socket = lib.openPsample({ source, dropPrivileges: ${option} }); }
      catch (e) { return print({ before, error: { name: e.name, code: e.code, message: e.message, capability: e.capability } }); }
      const after = threads();
      let received = 0;
      socket.on('sample', () => { if (++received === 3) { print({ report: socket.privileges, before, after, received }); socket.close(); } });
      for (let seq = 0; seq < 3; seq++) injector.send(sample(seq));
    })();
  `;

  it('a non-root process with only CAP_NET_ADMIN joins and receives', async () => {
    const out = await runChild(asNobody(',+net_admin'), openAndReceive('false'));
    expect(out.error).toBeUndefined();
    expect(out.received).toBe(3);
    // Without CAP_SYS_NICE the reader cannot run ahead of JavaScript: it keeps the process's niceness.
    expect(out.after!.find((t) => t.name === 'psample-reader')!.nice).toBe(out.before![0]!.nice);
    const NET_ADMIN = 1n << 12n;
    const main = out.before![0]!;
    expect({ uid: main.uid, prm: main.prm, eff: main.eff, amb: main.amb, bnd: main.bnd }).toEqual({
      uid: [65534, 65534, 65534, 65534],
      prm: NET_ADMIN,
      eff: NET_ADMIN,
      amb: NET_ADMIN,
      bnd: NET_ADMIN,
    });
  });

  it('without it, opening fails with PSAMPLE_PERMISSION naming the capability and how to grant it', async () => {
    const out = await runChild(asNobody(''), openAndReceive('false'));
    expect(out.before![0]!.eff).toBe(0n);
    expect(out.error).toMatchObject({ name: 'PsamplePermissionError', code: 'PSAMPLE_PERMISSION', capability: 'CAP_NET_ADMIN' });
    expect(out.error!.message).toMatch(
      /multicast group needs CAP_NET_ADMIN, which this process does not have: run as root, or grant only that capability \(systemd AmbientCapabilities=CAP_NET_ADMIN, setcap cap_net_admin\+ep .*securityContext\.capabilities\.add: \[NET_ADMIN\]\)/,
    );
  });

  it('with dropPrivileges: true it then gives up CAP_NET_ADMIN too; the bounding set stays (no CAP_SETPCAP), and it says why', async () => {
    const out = await runChild(asNobody(',+net_admin'), openAndReceive('true'));
    expect(out.error).toBeUndefined();
    expect(out.received).toBe(3);
    expect(out.report).toMatchObject({
      switchedUser: false,
      uid: 65534,
      boundingCleared: false,
      boundingKeptBecause: expect.stringMatching(/needs CAP_SETPCAP/),
    });
    for (const t of out.after!) {
      if (blocksEverySignal(t)) continue;
      expect({ tid: t.tid, inh: t.inh, prm: t.prm, eff: t.eff, amb: t.amb, nnp: t.nnp }).toEqual({
        tid: t.tid,
        inh: 0n,
        prm: 0n,
        eff: 0n,
        amb: 0n,
        nnp: 1,
      });
    }
  });

  // Kubernetes gives a non-root container process an added capability only through the
  // executable's file capabilities: it sets no ambient set. runAsUser 65534 with
  // capabilities { drop: [ALL], add: [NET_ADMIN] } is this: a bounding set of NET_ADMIN alone.
  describe('a file capability on the node binary (Kubernetes runAsNonRoot with capabilities.add: [NET_ADMIN])', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ovnps-filecap-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const withFileCap = path.join(dir, 'node');
    const bounded = (): string[] => asNobody('', ',+net_admin');

    // A file-capability executable runs in secure-execution mode, where the loader ignores
    // LD_PRELOAD: under npm run test:asan the sanitizer runtime the addon needs would be missing.
    it.skipIf(process.env.LD_PRELOAD !== undefined)(
      'grants CAP_NET_ADMIN to the process at exec, and dropPrivileges then gives it up',
      async () => {
        chmodSync(dir, 0o755);
        copyFileSync(process.execPath, withFileCap);
        execFileSync('setcap', ['cap_net_admin+ep', withFileCap]);
        const out = await runChild(bounded(), openAndReceive('true'), withFileCap);
        expect(out.error).toBeUndefined();
        expect(out.received).toBe(3);
        const NET_ADMIN = 1n << 12n;
        expect(out.before![0]).toMatchObject({ uid: [65534, 65534, 65534, 65534], inh: 0n, prm: NET_ADMIN, eff: NET_ADMIN, amb: 0n });
        for (const t of out.after!)
          if (!blocksEverySignal(t)) expect({ tid: t.tid, prm: t.prm, eff: t.eff }).toEqual({ tid: t.tid, prm: 0n, eff: 0n });
      },
    );

    it('without the file capability the same process has nothing, and fails with PSAMPLE_PERMISSION', async () => {
      const out = await runChild(bounded(), openAndReceive('true'));
      expect(out.before![0]).toMatchObject({ prm: 0n, eff: 0n, bnd: 1n << 12n });
      expect(out.error).toMatchObject({ code: 'PSAMPLE_PERMISSION', capability: 'CAP_NET_ADMIN' });
    });
  });

  it('a user switch without CAP_SETUID fails with PRIVILEGE_DROP before anything changed, and the socket is closed', async () => {
    const out = await runChild(
      asNobody(',+net_admin'),
      `
      const before = holdings();
      try { lib.openPsample({ source, dropPrivileges: { user: 'daemon' } }); }
      catch (e) { print({ error: { name: e.name, code: e.code, message: e.message }, left: leftSince(before), after: threads() }); }
    `,
    );
    expect(out.error).toMatchObject({ name: 'PrivilegeDropError', code: 'PRIVILEGE_DROP' });
    expect(out.error!.message).toMatch(/switching to user daemon needs CAP_SETUID and CAP_SETGID, which this process lacks/);
    expect(out.left).toEqual([]);
    expect(out.after![0]!.eff).toBe(1n << 12n);
  });
});
