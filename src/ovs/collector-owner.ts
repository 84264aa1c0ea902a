import { readFileSync, readlinkSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';

/**
 * The process that made a collector set, as recorded in the set's external_ids: enough for any
 * process on the node, in any container, to tell whether that owner still lives. A pid alone is
 * not: in a pod without hostPID every process is pid 1, so the next pod would find "pid 1" alive
 * (itself) and leave a killed pod's set behind for good.
 */
export interface OwnerProcess {
  readonly pid: number;
  /**
   * Inode of the owner's pid namespace (/proc/self/ns/pid). The kernel recycles these numbers once
   * a namespace is gone: a pod started after a killed one may get its number, so the start time
   * tells them apart.
   */
  readonly pidNamespace?: string;
  /** Inode of the owner's network namespace: where its beacon (below) can be reached. */
  readonly netNamespace?: string;
  /** The kernel's boot id: a set from an earlier boot has no live owner. */
  readonly bootId?: string;
  /** Clock ticks from boot to the owner's start (/proc/PID/stat field 22): tells a reused pid from the owner. */
  readonly startTime?: string;
}

export interface OwnerVerdict {
  readonly alive: boolean;
  /** Why, for the log. */
  readonly reason: string;
}

/** The external_ids keys, defined once: `ovn-psample-pid` is what sets made before 0.2 carry alone. */
const KEYS = {
  pid: 'ovn-psample-pid',
  pidNamespace: 'ovn-psample-pidns',
  netNamespace: 'ovn-psample-netns',
  bootId: 'ovn-psample-boot-id',
  startTime: 'ovn-psample-start-time',
} as const satisfies Record<keyof OwnerProcess, string>;

const OWNER_KEYS: ReadonlySet<string> = new Set(Object.values(KEYS));
export const isOwnerKey = (key: string): boolean => OWNER_KEYS.has(key);

const namespaceInode = (link: string): string | undefined => /^[a-z]+:\[(\d+)\]$/.exec(link)?.[1];

function readOr<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/** Field 22 of /proc/PID/stat; the command name before it may hold spaces and parentheses. */
function startTimeOf(pid: number | 'self'): string | undefined {
  const stat = readOr(() => readFileSync(`/proc/${pid}/stat`, 'latin1'));
  if (stat === undefined) return undefined;
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}

/** This process, read from /proc (a field /proc cannot give is left out). */
export function thisProcess(): OwnerProcess {
  const pidNamespace = readOr(() => namespaceInode(readlinkSync('/proc/self/ns/pid')));
  const netNamespace = readOr(() => namespaceInode(readlinkSync('/proc/self/ns/net')));
  const bootId = readOr(() => readFileSync('/proc/sys/kernel/random/boot_id', 'latin1').trim());
  const startTime = startTimeOf('self');
  return {
    pid: process.pid,
    ...(pidNamespace === undefined ? {} : { pidNamespace }),
    ...(netNamespace === undefined ? {} : { netNamespace }),
    ...(bootId === undefined ? {} : { bootId }),
    ...(startTime === undefined ? {} : { startTime }),
  };
}

export function ownerExternalIds(owner: OwnerProcess): [string, string][] {
  return (Object.keys(KEYS) as (keyof OwnerProcess)[])
    .filter((field) => owner[field] !== undefined)
    .map((field) => [KEYS[field], String(owner[field])]);
}

/** The owner a set's external_ids record, or undefined when it records none (made by `collector add` or another tool). */
export function ownerFromExternalIds(ids: Readonly<Record<string, string>>): OwnerProcess | undefined {
  const pid = Number(ids[KEYS.pid]);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const optional = (field: Exclude<keyof OwnerProcess, 'pid'>): Partial<OwnerProcess> =>
    ids[KEYS[field]] === undefined ? {} : { [field]: ids[KEYS[field]] };
  return {
    pid,
    ...optional('pidNamespace'),
    ...optional('netNamespace'),
    ...optional('bootId'),
    ...optional('startTime'),
  };
}

export function sameOwner(a: OwnerProcess, b: OwnerProcess): boolean {
  return (Object.keys(KEYS) as (keyof OwnerProcess)[]).every((field) => a[field] === b[field]);
}

/**
 * The abstract unix socket an owner listens on while it lives. The kernel frees it the moment the
 * process dies (SIGKILL and OOM included), it needs no file system and no privilege, and every
 * process of the owner's network namespace reaches it, whatever its pid namespace: a DaemonSet's
 * pods share the node's network namespace (psample samples arrive there), not always its pids.
 */
function beaconName(owner: OwnerProcess): string | undefined {
  if (owner.bootId === undefined || owner.pidNamespace === undefined || owner.startTime === undefined) return undefined;
  return `\0ovn-psample-owner/${owner.bootId}/${owner.pidNamespace}/${owner.pid}/${owner.startTime}`;
}

let beacon: Promise<Server | undefined> | undefined;

/**
 * Starts this process's beacon, once; it lives as long as the process (unreferenced: it never
 * keeps the process alive). A beacon this process already holds in another realm (a worker) is
 * that realm's, and serves as well while it lives.
 */
export function holdBeacon(owner: OwnerProcess): Promise<Server | undefined> {
  const name = beaconName(owner);
  if (name === undefined) return Promise.resolve(undefined);
  beacon ??= new Promise((resolve, reject) => {
    // A probe only connects: the connection is closed at once.
    const server = createServer((connection) => connection.destroy());
    server.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve(undefined) : reject(error)));
    server.listen({ path: name }, () => {
      server.unref();
      resolve(server);
    });
  });
  return beacon;
}

function probeBeacon(name: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ path: name });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Whether the process a set records still runs, judged from `self`: a set from another boot has
 * none; in our pid namespace its pid must still be a process started at the recorded time (our
 * own pid is us, never "alive somebody else"); in another one, its beacon must answer in our
 * network namespace. An owner neither way can reach is taken as alive: its set is left to it.
 */
export async function judgeOwner(recorded: OwnerProcess, self: OwnerProcess): Promise<OwnerVerdict> {
  if (recorded.bootId !== undefined && self.bootId !== undefined && recorded.bootId !== self.bootId) {
    return { alive: false, reason: 'it was made before the node last booted' };
  }
  // Sets made before 0.2 record the pid alone, in the pid namespace of the host they ran on.
  const samePidNamespace = recorded.pidNamespace === undefined || recorded.pidNamespace === self.pidNamespace;
  if (samePidNamespace) {
    if (recorded.pid === self.pid) return { alive: false, reason: `pid ${recorded.pid} is this process now` };
    const startTime = startTimeOf(recorded.pid);
    if (startTime === undefined) return { alive: false, reason: `no process ${recorded.pid} is left` };
    if (recorded.startTime !== undefined && startTime !== recorded.startTime) {
      return { alive: false, reason: `pid ${recorded.pid} is another process now` };
    }
    return { alive: true, reason: `process ${recorded.pid} still runs` };
  }
  const name = beaconName(recorded);
  if (name !== undefined && recorded.netNamespace !== undefined && recorded.netNamespace === self.netNamespace) {
    return (await probeBeacon(name))
      ? { alive: true, reason: `process ${recorded.pid} of pid namespace ${recorded.pidNamespace} still runs` }
      : { alive: false, reason: `process ${recorded.pid} of pid namespace ${recorded.pidNamespace} has exited` };
  }
  return { alive: true, reason: 'its process is in another pid and network namespace, where its liveness cannot be seen' };
}
