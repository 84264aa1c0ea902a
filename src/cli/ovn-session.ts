import type { Logger } from 'pino';
import { OvsdbConnectionError } from '../errors';
import { OvnSampleDecoder, NORTHBOUND_DATABASE, SOUTHBOUND_DATABASE } from '../ovn/decoder';
import { PodDirectory } from '../ovn/pod-directory';
import { OvsdbClient, type OvsdbStatus } from '../ovsdb/client';
import type { SslOptions } from '../ovsdb/transport';
import { cliClientOptions, localOvnRemote, ovnSocketPlaces, requireOvnRemote } from './node-databases';

export interface OvnSessionOptions {
  /** --nb: northbound remote(s) in ovn-nbctl syntax; default the node's local socket. */
  readonly nb?: string;
  /** --sb: southbound remote(s); default the node's local socket when it exists, else none. */
  readonly sb?: string;
  readonly ssl?: SslOptions;
}

/** Where the OVN databases are: the remotes named (a named socket that is missing fails now), or the node's. */
export interface OvnRemotes {
  /** Undefined: none named and none on this node. */
  readonly nb: string | undefined;
  readonly sb: string | undefined;
}

export function findOvnRemotes(options: OvnSessionOptions): OvnRemotes {
  return {
    nb: options.nb === undefined ? localOvnRemote('northbound') : requireOvnRemote('northbound', options.nb),
    sb: options.sb === undefined ? localOvnRemote('southbound') : requireOvnRemote('southbound', options.sb),
  };
}

/** The northbound remote, or the error that says where it was looked for and what to pass. */
export function requireNorthbound(remotes: OvnRemotes): string {
  if (remotes.nb === undefined) {
    throw new OvsdbConnectionError(
      `No OVN northbound database at ${ovnSocketPlaces('northbound')}: run this on a node with the OVN databases, or pass --nb REMOTE (e.g. --nb tcp:192.0.2.10:6641).`,
    );
  }
  return remotes.nb;
}

/** The OVN databases a command decodes through: the decoder, pod identity, and their connections' state. */
export interface OvnSession {
  readonly decoder: OvnSampleDecoder;
  /** Undefined unless asked for (listen and decode name no pods). */
  readonly pods: PodDirectory | undefined;
  /** database -> whether connected now (for the metrics). */
  readonly connected: Map<string, boolean>;
  close(): Promise<void>;
}

/**
 * Connects to the northbound database (and the southbound one when there is one), mirrors each
 * once with what decoding (and with `pods`, pod identity) reads, and reports connection changes
 * to the log.
 */
export async function startOvnSession(
  remotes: OvnRemotes & { readonly nb: string },
  ssl: SslOptions | undefined,
  log: Logger,
  wanted: { readonly pods: boolean },
): Promise<OvnSession> {
  const clientOptions = cliClientOptions(ssl);
  const clients: OvsdbClient[] = [];
  const connected = new Map<string, boolean>();
  try {
    const nbClient = await OvsdbClient.connect(remotes.nb, { ...clientOptions, database: NORTHBOUND_DATABASE });
    clients.push(nbClient);
    const sbClient =
      remotes.sb === undefined ? undefined : await OvsdbClient.connect(remotes.sb, { ...clientOptions, database: SOUTHBOUND_DATABASE });
    if (sbClient !== undefined) clients.push(sbClient);
    else
      log.warn(
        'no OVN southbound database: datapaths stay unnamed, drop samples undecoded and pods are matched on every network; pass --sb REMOTE',
      );
    const decoder = new OvnSampleDecoder({ nb: nbClient, ...(sbClient === undefined ? {} : { sb: sbClient }) });
    decoder.on('status', (database: string, status: OvsdbStatus) => {
      const up = status.state === 'connected' || status.state === 'synced';
      if (connected.get(database) !== up) {
        if (up) log.info({ database, remote: status.remote }, `${database} connected`);
        else if (connected.has(database))
          log.warn({ database, remote: status.remote }, `${database} disconnected; reconnecting (decoding goes on with what was mirrored)`);
      }
      connected.set(database, up);
    });
    decoder.on('error', (error: Error) => log.warn({ err: error.message }, 'OVN database trouble'));
    connected.set(NORTHBOUND_DATABASE, true);
    if (sbClient !== undefined) connected.set(SOUTHBOUND_DATABASE, true);
    // Started in the same turn, the decoder and the pod directory share one northbound mirror and one initial sync.
    const [started, followed] = await Promise.allSettled([decoder.start(), wanted.pods ? PodDirectory.follow(nbClient) : undefined]);
    if (started.status === 'rejected' || followed.status === 'rejected') {
      await Promise.all([decoder.close(), followed.status === 'fulfilled' ? followed.value?.close() : undefined]);
      throw started.status === 'rejected' ? started.reason : (followed as PromiseRejectedResult).reason;
    }
    const pods = followed.value;
    log.info({ nb: nbClient.remote, sb: sbClient?.remote, ...(pods === undefined ? {} : { pods: pods.size }) }, 'OVN databases synced');
    return {
      decoder,
      pods,
      connected,
      async close() {
        await Promise.all([decoder.close(), pods?.close()]);
        await Promise.all(clients.map((client) => client.close()));
      },
    };
  } catch (error) {
    await Promise.all(clients.map((client) => client.close()));
    throw error;
  }
}
