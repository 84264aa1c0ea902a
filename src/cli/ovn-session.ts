import { existsSync } from 'node:fs';
import { OvsdbConnectionError } from '../errors';
import type { Logger } from 'pino';
import { OvnSampleDecoder, NORTHBOUND_DATABASE, SOUTHBOUND_DATABASE } from '../ovn/decoder';
import { PodDirectory } from '../ovn/pod-directory';
import { OvsdbClient, type OvsdbStatus } from '../ovsdb/client';
import type { SslOptions } from '../ovsdb/transport';
import { DEFAULT_NB_REMOTE, DEFAULT_SB_REMOTE } from './decode-ovn';
import { CLI_CONNECT_TIMEOUT_MS } from './ovs-connect';

export interface OvnSessionOptions {
  readonly nb?: string;
  readonly sb?: string;
  readonly ssl?: SslOptions;
}

/** The OVN databases a watch decodes through: the decoder, pod identity, and their connections' state. */
export interface OvnSession {
  readonly decoder: OvnSampleDecoder;
  readonly pods: PodDirectory;
  /** database -> 1 while connected (for the metrics). */
  readonly connected: Map<string, boolean>;
  close(): Promise<void>;
}

const exists = (remote: string): boolean => existsSync(remote.slice('unix:'.length));

/** A named local socket that is not there fails now, not after the connect timeout. */
function requirePresent(remote: string | undefined, database: string): void {
  if (remote !== undefined && remote.startsWith('unix:') && !remote.includes(',') && !exists(remote)) {
    throw new OvsdbConnectionError(
      `No OVN ${database} database at ${remote}: check the path (ovn-ctl puts it under /var/run/ovn), or pass a tcp: or ssl: remote.`,
    );
  }
}

/**
 * Connects to the northbound database (and the southbound one when given or present), mirrors
 * what decoding and pod identity need, and reports connection changes to the log. Undefined
 * when no database was named and none runs on this node: the watch then shows cookies only.
 */
export async function startOvnSession(options: OvnSessionOptions, log: Logger): Promise<OvnSession | undefined> {
  if (options.nb === undefined && !exists(DEFAULT_NB_REMOTE)) {
    log.warn(
      `no OVN northbound database at ${DEFAULT_NB_REMOTE}: showing cookies without their ACL, policy or pods; pass --nb REMOTE to decode them`,
    );
    return undefined;
  }
  requirePresent(options.nb, 'northbound');
  requirePresent(options.sb, 'southbound');
  const sb = options.sb ?? (exists(DEFAULT_SB_REMOTE) ? DEFAULT_SB_REMOTE : undefined);
  const clientOptions = { connectTimeoutMs: CLI_CONNECT_TIMEOUT_MS, ...(options.ssl === undefined ? {} : { ssl: options.ssl }) };
  const clients: OvsdbClient[] = [];
  const connected = new Map<string, boolean>();
  try {
    const nbClient = await OvsdbClient.connect(options.nb ?? DEFAULT_NB_REMOTE, { ...clientOptions, database: NORTHBOUND_DATABASE });
    clients.push(nbClient);
    const sbClient = sb === undefined ? undefined : await OvsdbClient.connect(sb, { ...clientOptions, database: SOUTHBOUND_DATABASE });
    if (sbClient !== undefined) clients.push(sbClient);
    else
      log.warn(
        'no OVN southbound database: datapaths stay unnamed, drop samples undecoded and pods are matched on every network; pass --sb REMOTE',
      );
    const ovn = new OvnSampleDecoder({ nb: nbClient, ...(sbClient === undefined ? {} : { sb: sbClient }) });
    ovn.on('status', (database: string, status: OvsdbStatus) => {
      const up = status.state === 'connected' || status.state === 'synced';
      if (connected.get(database) !== up) {
        if (up) log.info({ database, remote: status.remote }, `${database} connected`);
        else if (connected.has(database))
          log.warn({ database, remote: status.remote }, `${database} disconnected; reconnecting (decoding goes on with what was mirrored)`);
      }
      connected.set(database, up);
    });
    ovn.on('error', (error: Error) => log.warn({ err: error.message }, 'OVN database trouble'));
    connected.set(NORTHBOUND_DATABASE, true);
    if (sbClient !== undefined) connected.set(SOUTHBOUND_DATABASE, true);
    await ovn.start();
    const pods = await PodDirectory.follow(nbClient);
    log.info({ nb: nbClient.remote, sb: sbClient?.remote, pods: pods.size }, 'OVN databases synced');
    return {
      decoder: ovn,
      pods,
      connected,
      async close() {
        await Promise.all([ovn.close(), pods.close()]);
        await Promise.all(clients.map((client) => client.close()));
      },
    };
  } catch (error) {
    await Promise.all(clients.map((client) => client.close()));
    throw error;
  }
}
