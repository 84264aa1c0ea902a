import { existsSync } from 'node:fs';
import { OvsdbConnectionError } from '../errors';
import { DEFAULT_OVS_REMOTE, LocalOvs } from '../ovs/local-ovs';
import type { SslOptions } from '../ovsdb/transport';

/** A CLI should not wait the library's 30 s for a database that is not there. */
export const CLI_CONNECT_TIMEOUT_MS = 10_000;

/** Connects to the node's OVS database (--db), naming the socket and the fix when it is missing. */
export async function openLocalOvs(remote: string | undefined, ssl: SslOptions | undefined, signal?: AbortSignal): Promise<LocalOvs> {
  const db = remote ?? DEFAULT_OVS_REMOTE;
  if (db.startsWith('unix:') && !existsSync(db.slice('unix:'.length))) {
    throw new OvsdbConnectionError(
      `No OVS database at ${db}: run this as root on a node where Open vSwitch runs, or pass --db REMOTE (ovs-vsctl syntax, e.g. --db unix:/run/openvswitch/db.sock).`,
    );
  }
  return LocalOvs.open(db, {
    client: { connectTimeoutMs: CLI_CONNECT_TIMEOUT_MS, ...(ssl === undefined ? {} : { ssl }) },
    ...(signal === undefined ? {} : { signal }),
  });
}
