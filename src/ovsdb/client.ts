import { EventEmitter } from 'node:events';
import {
  OvsdbClosedError,
  OvsdbListenerError,
  OvsdbMessageSizeError,
  OvsdbProtocolError,
  OvsdbSchemaError,
  OvsdbTransactionError,
} from '../errors';
import { Backoff, type BackoffOptions } from './backoff';
import type { TableCache } from './cache';
import type { JsonRpcSession } from './json-rpc';
import { MONITOR_METHODS, type MonitorMethod, type MonitorSyncResult } from './monitor';
import { MonitorSet, type OvsdbResync } from './monitor-set';
import { DEFAULT_MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES_LIMIT } from './framing';
import { atLeast, atMost } from './option-range';
import { emitErrorIfHeard } from './optional-error';
import { parseRemotes, type Remote } from './remote';
import { parseSchema, type DatabaseSchema } from './schema';
import { ServerDatabaseJudge } from './server-database';
import { qualifyServer, type ServerWatch } from './server-qualification';
import { SessionLoop, type SessionStatus } from './session-loop';
import { endpointsOf, type SslOptions } from './transport';

/** An RFC 7047 error or details member: a string, or whatever a nonconforming server sent. */
const jsonText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

export type { OvsdbResync, OvsdbResyncReason } from './monitor-set';

export interface OvsdbClientOptions {
  /** Credentials for ssl: remotes; the server certificate must be signed by `ca`. */
  readonly ssl?: SslOptions;
  /** Closes the client when aborted. */
  readonly signal?: AbortSignal;
  /** Use only the leader of a clustered database (needed for fast writes, not for reading). */
  readonly leaderOnly?: boolean;
  /** The database whose _Server row decides if a member is usable. Default: every clustered one. */
  readonly database?: string;
  /**
   * Silence after which an echo is sent on a tcp: or ssl: session; 0 disables the probe. Default
   * 5000. unix: sessions are not probed (the kernel reports a dead local peer), as in the OVS IDL.
   */
  readonly inactivityProbeMs?: number;
  /**
   * Silence after which a probed session is dropped; at least inactivityProbeMs. Default 60 000:
   * a server busy compacting or electing a raft leader answers nothing for seconds, and dropping
   * it would cost a full reload (a standalone server keeps no transaction history to resume from).
   */
  readonly inactivityTimeoutMs?: number;
  readonly backoff?: BackoffOptions;
  /** How long connect() keeps trying every remote before it rejects. Default 30 000 ms. */
  readonly connectTimeoutMs?: number;
  /** How long transact(), getSchema() and listDatabases() wait for a usable member. Default connectTimeoutMs. */
  readonly requestTimeoutMs?: number;
  /**
   * Time allowed for one connection attempt: opening the TCP/TLS/unix stream, then the server's
   * answers to the first requests (schema and _Server rows). Default 10 000 ms.
   */
  readonly attemptTimeoutMs?: number;
  /**
   * The largest message accepted from the server; a larger one ends the session (counted in
   * stats.oversizedMessages) having buffered at most this much. Default 256 MiB (a monitor reply
   * of about 400,000 ACLs in the decoder's selection); at most 2 GiB - 1.
   */
  readonly maxMessageBytes?: number;
  /** Monitor methods to try, newest first. Default monitor_cond_since, monitor_cond, monitor. */
  readonly monitorMethods?: readonly MonitorMethod[];
  /** Try a cluster's members in random order, as the OVS IDL does, so clients spread over it. Default true. */
  readonly shuffleRemotes?: boolean;
}

export type OvsdbStatus =
  SessionStatus | ({ readonly state: 'synced'; readonly remote: string; readonly database: string } & MonitorSyncResult);

export interface OvsdbClientEvents {
  status: [status: OvsdbStatus];
  /** A monitored cache is being reloaded from scratch on a live session; a 'synced' status follows. */
  resync: [resync: OvsdbResync];
  /** Trouble that does not end the connection (emitted only when someone listens; always counted). */
  error: [error: Error];
}

export interface OvsdbClientStats {
  /** Sessions that reached 'connected'. */
  sessions: number;
  /** Protocol anomalies and failing listeners (cache, 'status'), also emitted as 'error'. */
  anomalies: number;
  /** Caches reloaded on a live session (also emitted as 'resync'): they diverged, or the schema changed. */
  resyncs: number;
  /** Sessions ended because the server sent a message over maxMessageBytes. */
  oversizedMessages: number;
}

/**
 * An RFC 7047 client over a list of remotes (a cluster's members): it keeps one session open
 * (see SessionLoop), refuses members cut off from their cluster (see qualifyServer), and keeps
 * every monitored TableCache converged across reconnections, divergences and schema conversions
 * (see MonitorSet), resuming from the last transaction id when the server still has it.
 */
export class OvsdbClient extends EventEmitter<OvsdbClientEvents> {
  readonly remotes: readonly Remote[];
  readonly stats: OvsdbClientStats = { sessions: 0, anomalies: 0, resyncs: 0, oversizedMessages: 0 };
  private readonly options: OvsdbClientOptions;
  private readonly loop: SessionLoop;
  private readonly monitors: MonitorSet;
  private readonly schemas = new Map<string, Promise<DatabaseSchema>>();
  private readonly judge: ServerDatabaseJudge;
  private readonly requestTimeoutMs: number;
  private readonly onAbort = (): void => void this.close();
  private serverWatch: ServerWatch | undefined;
  private closed = false;

  private constructor(remotes: readonly Remote[], options: OvsdbClientOptions) {
    super();
    this.remotes = remotes;
    this.options = options;
    this.judge = new ServerDatabaseJudge(options.database, options.leaderOnly === true);
    const connectTimeoutMs = atLeast('connectTimeoutMs', options.connectTimeoutMs ?? 30_000, 1);
    this.requestTimeoutMs = atLeast('requestTimeoutMs', options.requestTimeoutMs ?? connectTimeoutMs, 1);
    const probeMs = atLeast('inactivityProbeMs', options.inactivityProbeMs ?? 5000, 0);
    const timeoutMs = atLeast('inactivityTimeoutMs', options.inactivityTimeoutMs ?? Math.max(60_000, probeMs), probeMs);
    const endpoints = endpointsOf(remotes, options.ssl);
    this.loop = new SessionLoop(
      {
        remotes,
        endpoints: options.shuffleRemotes === false ? endpoints : shuffled(endpoints),
        backoff: new Backoff(options.backoff),
        attemptTimeoutMs: atLeast('attemptTimeoutMs', options.attemptTimeoutMs ?? 10_000, 1),
        probe: { probeMs, timeoutMs: probeMs === 0 ? 0 : timeoutMs },
        maxMessageBytes: atMost(
          'maxMessageBytes',
          atLeast('maxMessageBytes', options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES, 1),
          MAX_MESSAGE_BYTES_LIMIT,
        ),
      },
      {
        open: (session, remote) => this.openSession(session, remote),
        ready: (session) => {
          this.stats.sessions++;
          this.monitors.startAll(session);
        },
        notification: (session, method, params) => this.onNotification(session, method, params),
        anomaly: (error) => this.report(error),
        status: (status) => {
          if (status.state === 'disconnected' && status.error instanceof OvsdbMessageSizeError) {
            this.stats.oversizedMessages++;
          }
          this.emitStatus(status);
        },
      },
    );
    this.monitors = new MonitorSet({
      schemaOf: (session, database, fresh) => {
        if (fresh) {
          this.schemas.delete(database);
        }
        return this.schemaOn(session, database);
      },
      synced: (database, result) => this.emitStatus({ state: 'synced', remote: this.loop.remote, database, ...result }),
      resyncing: (database, reason) => {
        this.stats.resyncs++;
        this.emitListenerSafe('resync', { database, reason, remote: this.loop.remote });
      },
      report: (error) => this.report(error),
    });
  }

  /** Connects to the first usable remote; rejects if none is usable within connectTimeoutMs. */
  static async connect(remote: string | readonly string[], options: OvsdbClientOptions = {}): Promise<OvsdbClient> {
    const client = new OvsdbClient(parseRemotes(remote), options);
    const { signal } = options;
    if (signal?.aborted === true) {
      throw new OvsdbClosedError('The OVSDB connection was aborted before it started.', { cause: signal.reason });
    }
    signal?.addEventListener('abort', client.onAbort, { once: true });
    client.loop.start();
    try {
      await client.loop.waitForSession(
        options.connectTimeoutMs ?? 30_000,
        options.database === undefined ? 'Cannot connect' : `Cannot connect to ${options.database}`,
      );
    } catch (error) {
      await client.close();
      throw error;
    }
    return client;
  }

  /** The remote of the current session ('' while disconnected). */
  get remote(): string {
    return this.loop.remote;
  }

  get connected(): boolean {
    return this.loop.active !== undefined;
  }

  async listDatabases(): Promise<string[]> {
    const result = await (await this.session('list_dbs')).request('list_dbs', []);
    if (!Array.isArray(result) || !result.every((name) => typeof name === 'string')) {
      throw new OvsdbProtocolError('The list_dbs reply is not an array of names; the server does not follow RFC 7047.');
    }
    return result;
  }

  async getSchema(database: string): Promise<DatabaseSchema> {
    return this.schemaOn(await this.session(`get_schema ${database}`), database);
  }

  /**
   * Runs an RFC 7047 transaction. Resolves with the per-operation results; rejects with
   * OvsdbTransactionError when an operation or the commit failed (nothing was committed then).
   */
  async transact(database: string, operations: readonly unknown[]): Promise<unknown[]> {
    const session = await this.session(`transact on ${database}`);
    const results = await session.request('transact', [database, ...operations]);
    if (!Array.isArray(results)) {
      throw new OvsdbProtocolError('The transact reply is not an array of results; the server does not follow RFC 7047.');
    }
    const failed = results.findIndex(
      (result) => typeof result === 'object' && result !== null && (result as { error?: unknown }).error != null,
    );
    if (failed >= 0) {
      const { error, details } = results[failed] as { error: unknown; details?: unknown };
      const where = failed < operations.length ? `operation ${failed}` : 'the commit';
      throw new OvsdbTransactionError(
        `The transaction on ${database} failed at ${where}: ${jsonText(error)}${details === undefined ? '' : ` (${jsonText(details)})`}. Nothing was committed; fix the operation and retry.`,
        results,
      );
    }
    return results as unknown[];
  }

  /**
   * Keeps `cache` in step with `database` for as long as the client lives, across reconnections.
   * Resolves after the initial content is in the cache.
   */
  monitor(database: string, cache: TableCache): Promise<void> {
    if (cache.schema.name !== database) {
      return Promise.reject(
        new OvsdbSchemaError(
          `The cache was built for database "${cache.schema.name}", not "${database}": build it from that database's schema.`,
        ),
      );
    }
    if (this.closed) {
      return Promise.reject(new OvsdbClosedError('Cannot monitor: the OVSDB client is closed.'));
    }
    if (this.monitors.has(cache)) {
      return Promise.reject(new OvsdbSchemaError('This cache is already monitored by this client: one monitor feeds one cache.'));
    }
    return this.monitors.add(database, cache, this.options.monitorMethods ?? MONITOR_METHODS, this.loop.active);
  }

  /**
   * Reloads a monitored cache from scratch with what it selects now, after TableCache.widen():
   * emitted as 'resync' (reason 'selection-widened'); resolves once the reloaded content is in the
   * cache, on this session or, if it drops meanwhile, on the next (which reloads rather than resumes).
   */
  resync(cache: TableCache): Promise<void> {
    if (this.closed) {
      return Promise.reject(new OvsdbClosedError('Cannot resync: the OVSDB client is closed.'));
    }
    return this.monitors.resync(cache, 'selection-widened');
  }

  /**
   * Stops feeding `cache` (the server is sent monitor_cancel), so a cache whose owner is done with
   * it does not stay mirrored for the client's lifetime. A monitor() of it still waiting for its
   * initial sync rejects with OvsdbClosedError. Does nothing for a cache this client does not feed.
   */
  unmonitor(cache: TableCache): Promise<void> {
    return this.monitors.remove(cache);
  }

  /** Closes the connection for good; pending requests and unsynced monitors reject with OvsdbClosedError. */
  async close(): Promise<void> {
    const error = new OvsdbClosedError('The OVSDB client was closed.');
    if (!this.closed) {
      this.closed = true;
      this.options.signal?.removeEventListener('abort', this.onAbort);
      this.monitors.close(error);
    }
    await this.loop.close(error);
  }

  private session(what: string): Promise<JsonRpcSession> {
    return this.loop.waitForSession(this.requestTimeoutMs, `Cannot ${what}`);
  }

  /** Qualifies a new session; its schemas are read afresh, since a reconnect may reach an upgraded server. */
  private async openSession(session: JsonRpcSession, remote: string): Promise<void> {
    this.schemas.clear();
    this.serverWatch = undefined;
    await qualifyServer(
      session,
      remote,
      this.judge,
      (database) => this.schemaOn(session, database),
      (error) => this.report(error),
      (watch) => (this.serverWatch = watch),
    );
  }

  private onNotification(session: JsonRpcSession, method: string, params: unknown): void {
    try {
      if (this.serverWatch?.handle(session, method, params) === true || this.monitors.handle(session, method, params)) {
        return;
      }
    } catch (error) {
      this.report(new OvsdbProtocolError(`Applying a "${method}" notification failed: ${(error as Error).message}`, { cause: error }));
      return;
    }
    if (method !== 'update' && method !== 'update2' && method !== 'update3' && method !== 'monitor_canceled') {
      this.report(new OvsdbProtocolError(`The server sent a "${method}" notification this client does not use; ignored.`));
      return;
    }
    const monitorId: unknown = Array.isArray(params) ? (params[0] as unknown) : undefined;
    this.report(
      new OvsdbProtocolError(
        `The server sent an "${method}" notification for monitor ${JSON.stringify(monitorId)}, which no cache here uses (or is malformed); ignored.`,
      ),
    );
  }

  private schemaOn(session: JsonRpcSession, database: string): Promise<DatabaseSchema> {
    let schema = this.schemas.get(database);
    if (schema === undefined) {
      schema = session.request('get_schema', [database]).then(parseSchema);
      this.schemas.set(database, schema);
      schema.catch(() => this.schemas.get(database) === schema && this.schemas.delete(database));
    }
    return schema;
  }

  private report(error: Error): void {
    this.stats.anomalies++;
    try {
      emitErrorIfHeard(this, error);
    } catch {
      // An 'error' listener that throws has nowhere left to report to; the anomaly is counted above,
      // and letting it escape would end the session or the reconnection loop.
    }
  }

  private emitStatus(status: OvsdbStatus): void {
    this.emitListenerSafe('status', status);
  }

  /**
   * Each listener is called on its own: one that throws is reported, and must neither keep the
   * others from hearing the event nor stop the reconnection loop.
   */
  private emitListenerSafe<K extends 'status' | 'resync'>(event: K, ...args: OvsdbClientEvents[K]): void {
    for (const listener of this.rawListeners(event) as ((...values: OvsdbClientEvents[K]) => void)[]) {
      try {
        listener.apply(this, args);
      } catch (error) {
        this.report(new OvsdbListenerError(`The OVSDB client's '${event}' listeners`, [error]));
      }
    }
  }
}

/** Fisher-Yates: every order equally likely. */
function shuffled<T>(items: readonly T[]): T[] {
  const order = [...items];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}
