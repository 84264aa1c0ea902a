import { existsSync, readFileSync } from 'node:fs';
import { OvsdbConnectionError } from '../errors';
import { DEFAULT_OVS_REMOTE, LocalOvs } from '../ovs/local-ovs';
import type { OvsdbClientOptions } from '../ovsdb/client';
import type { SslOptions } from '../ovsdb/transport';
import { CliUsageError } from './errors';

/**
 * Where a node's databases are, the one place the CLI looks for them. The OVN sockets sit in a
 * different directory per distribution: /var/run/ovn (ovn-ctl, plain OVN), /var/run/openvswitch
 * (upstream ovn-kubernetes and kind, where one host directory holds OVS's and OVN's sockets) and
 * /var/run/ovn-ic (OpenShift's per-node interconnect databases). The first that exists is used.
 */
const OVN_DIRECTORIES = ['/var/run/ovn', '/var/run/openvswitch', '/var/run/ovn-ic'] as const;
export { DEFAULT_OVS_REMOTE };
export const DEFAULT_NB_REMOTE = `unix:${OVN_DIRECTORIES[0]}/ovnnb_db.sock`;
export const DEFAULT_SB_REMOTE = `unix:${OVN_DIRECTORIES[0]}/ovnsb_db.sock`;

/** A CLI should not wait the library's 30 s for a database that is not there. */
export const CLI_CONNECT_TIMEOUT_MS = 10_000;

export type OvnDatabase = 'northbound' | 'southbound';
const SOCKET_NAMES: Readonly<Record<OvnDatabase, string>> = { northbound: 'ovnnb_db.sock', southbound: 'ovnsb_db.sock' };
const SCHEMA_NAMES: Readonly<Record<OvnDatabase, string>> = { northbound: 'OVN_Northbound', southbound: 'OVN_Southbound' };

const socketPath = (remote: string): string => remote.slice('unix:'.length);
const isSingleUnixSocket = (remote: string): boolean => remote.startsWith('unix:') && !remote.includes(',');

/** The node's local socket of an OVN database, or undefined where none of the usual directories has it. */
export function localOvnRemote(database: OvnDatabase): string | undefined {
  const found = OVN_DIRECTORIES.map((directory) => `${directory}/${SOCKET_NAMES[database]}`).find((path) => existsSync(path));
  return found === undefined ? undefined : `unix:${found}`;
}

/** Where `localOvnRemote` looks, for messages. */
export function ovnSocketPlaces(database: OvnDatabase): string {
  const places = OVN_DIRECTORIES.map((directory) => `${directory}/${SOCKET_NAMES[database]}`);
  return `${places.slice(0, -1).join(', ')} or ${places[places.length - 1]}`;
}

/**
 * A remote the user named: a single unix socket that is not there fails now, naming the path,
 * rather than after the connect timeout.
 */
export function requireOvnRemote(database: OvnDatabase, remote: string): string {
  if (isSingleUnixSocket(remote) && !existsSync(socketPath(remote))) {
    throw new OvsdbConnectionError(
      `Cannot connect to ${SCHEMA_NAMES[database]}: No OVN ${database} database at ${remote}: connect ENOENT (no socket at that path): ` +
        'check the path (ovn-ctl puts it under /var/run/ovn), or pass a tcp: or ssl: remote.',
    );
  }
  return remote;
}

/** Connects to the node's OVS database (--db, or the local socket), naming the socket and the fix when it is missing. */
export async function openLocalOvs(db: string | undefined, ssl: SslOptions | undefined, signal?: AbortSignal): Promise<LocalOvs> {
  const remote = db ?? DEFAULT_OVS_REMOTE;
  if (isSingleUnixSocket(remote) && !existsSync(socketPath(remote))) {
    throw new OvsdbConnectionError(
      `No OVS database at ${remote}: run this as root on a node where Open vSwitch runs, or pass --db REMOTE (ovs-vsctl syntax, e.g. --db unix:/run/openvswitch/db.sock).`,
    );
  }
  return LocalOvs.open(remote, { client: cliClientOptions(ssl), ...(signal === undefined ? {} : { signal }) });
}

/** Whether this node has the local OVS database socket. */
export const hasLocalOvs = (): boolean => existsSync(socketPath(DEFAULT_OVS_REMOTE));

/** What commander collects for ssl: remotes, named as ovn-nbctl and ovs-vsctl name them. */
export interface SslFlags {
  privateKey?: string;
  certificate?: string;
  caCert?: string;
}

function readPem(flag: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new CliUsageError(`${flag} ${path}: ${(error as Error).message}`);
  }
}

/** The TLS files of ssl: remotes, read now so a wrong path is a usage error before anything opens. */
export function sslOptions(flags: SslFlags): SslOptions | undefined {
  const given = [flags.privateKey, flags.certificate, flags.caCert].filter((value) => value !== undefined).length;
  if (given === 0) return undefined;
  if (flags.privateKey === undefined || flags.certificate === undefined || flags.caCert === undefined) {
    throw new CliUsageError('ssl: remotes need all three of --private-key, --certificate and --ca-cert');
  }
  return {
    key: readPem('--private-key', flags.privateKey),
    cert: readPem('--certificate', flags.certificate),
    ca: readPem('--ca-cert', flags.caCert),
  };
}

/** The client options every CLI connection uses. */
export function cliClientOptions(ssl: SslOptions | undefined): OvsdbClientOptions {
  return { connectTimeoutMs: CLI_CONNECT_TIMEOUT_MS, ...(ssl === undefined ? {} : { ssl }) };
}
