import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  OvsdbClosedError,
  OvsdbConnectionError,
  OvsdbDisconnectedError,
  OvsdbListenerError,
  OvsdbProtocolError,
  OvsdbRpcError,
  OvsdbSchemaError,
  OvsdbTransactionError,
} from '../errors';
import { Backoff, type BackoffOptions } from './backoff';
import { TableCache } from './cache';
import { JsonRpcSession } from './json-rpc';
import { MONITOR_METHODS, MonitorSubscription, type MonitorMethod, type MonitorSyncResult } from './monitor';
import { emitErrorIfHeard } from './optional-error';
import { formatRemote, parseRemotes, type Remote } from './remote';
import { parseSchema, type DatabaseSchema } from './schema';
import { SERVER_DATABASE_COLUMNS, ServerDatabaseJudge, type ServerDatabaseRow } from './server-database';
import { endpointsOf, openStream, type Endpoint, type SslOptions } from './transport';

/** A session that lasted this long resets the backoff; shorter ones count as failed attempts. */
const STABLE_SESSION_MS = 5000;

export interface OvsdbClientOptions {
  /** Credentials for ssl: remotes; the server certificate must be signed by `ca`. */
  readonly ssl?: SslOptions;
  /** Closes the client when aborted. */
  readonly signal?: AbortSignal;
  /** Use only the leader of a clustered database (needed for fast writes, not for reading). */
  readonly leaderOnly?: boolean;
  /** The database whose _Server row decides if a member is usable. Default: every clustered one. */
  readonly database?: string;
  /** Silence after which an echo is sent, and as long again after which the connection is dropped. 0 disables. Default 5000. */
  readonly inactivityProbeMs?: number;
  readonly backoff?: BackoffOptions;
  /** How long connect() keeps trying every remote before it rejects. Default 30 000 ms. */
  readonly connectTimeoutMs?: number;
  /** Time allowed for one TCP/TLS/unix connection attempt. Default 5000 ms. */
  readonly attemptTimeoutMs?: number;
  /** Monitor methods to try, newest first. Default monitor_cond_since, monitor_cond, monitor. */
  readonly monitorMethods?: readonly MonitorMethod[];
}

export type OvsdbStatus =
  | { readonly state: 'connecting'; readonly remote: string }
  | { readonly state: 'connected'; readonly remote: string }
  | ({ readonly state: 'synced'; readonly remote: string; readonly database: string } & MonitorSyncResult)
  | {
      readonly state: 'disconnected';
      readonly remote: string;
      /** Why; undefined when the client was closed. */
      readonly error: Error | undefined;
      /** Delay before the next attempt (0: the next member is tried at once); undefined when closed. */
      readonly retryInMs: number | undefined;
    };

export interface OvsdbClientEvents {
  status: [status: OvsdbStatus];
  /** Trouble that does not end the connection (emitted only when someone listens; always counted). */
  error: [error: Error];
}

export interface OvsdbClientStats {
  /** Sessions that reached 'connected'. */
  sessions: number;
  /** Protocol anomalies and failing listeners (cache, 'status'), also emitted as 'error'. */
  anomalies: number;
}

interface Watch {
  readonly subscription: MonitorSubscription;
  synced: boolean;
  resolve(): void;
  reject(error: Error): void;
}

interface SessionWaiter {
  resolve(session: JsonRpcSession): void;
  reject(error: Error): void;
}

/**
 * An RFC 7047 client over a list of remotes (a cluster's members): it keeps one session open,
 * moving to the next member and backing off with jitter when a session fails, and keeps every
 * monitored TableCache converged across reconnections, resuming from the last transaction id
 * when the server still has it.
 */
export class OvsdbClient extends EventEmitter<OvsdbClientEvents> {
  readonly remotes: readonly Remote[];
  private readonly endpoints: readonly Endpoint[];
  readonly stats: OvsdbClientStats = { sessions: 0, anomalies: 0 };
  private readonly options: OvsdbClientOptions;
  private readonly stopper = new AbortController();
  private readonly watches: Watch[] = [];
  private readonly waiters = new Set<SessionWaiter>();
  private readonly lastErrors = new Map<string, Error>();
  private readonly schemas = new Map<string, Promise<DatabaseSchema>>();
  private readonly judge: ServerDatabaseJudge;
  private readonly backoff: Backoff;
  /** Monitors being cancelled: updates the server sent before it saw monitor_cancel are expected. */
  private readonly cancelledMonitors = new Set<string>();
  private readonly onAbort = (): void => void this.close();
  /** The session that passed qualification; requests go there. */
  private session: JsonRpcSession | undefined;
  /** Any session in progress, qualified or not, so close() can end it. */
  private opening: JsonRpcSession | undefined;
  private serverWatch: MonitorSubscription | undefined;
  private currentRemote = '';
  private closed = false;
  private nextMonitorId = 1;
  private loopDone: Promise<void> = Promise.resolve();

  private constructor(remotes: readonly Remote[], options: OvsdbClientOptions) {
    super();
    this.remotes = remotes;
    this.endpoints = endpointsOf(remotes, options.ssl);
    this.options = options;
    this.judge = new ServerDatabaseJudge(options.database, options.leaderOnly === true);
    this.backoff = new Backoff(options.backoff);
  }

  /** Connects to the first usable remote; rejects if none is usable within connectTimeoutMs. */
  static async connect(remote: string | readonly string[], options: OvsdbClientOptions = {}): Promise<OvsdbClient> {
    const client = new OvsdbClient(parseRemotes(remote), options);
    const { signal } = options;
    if (signal?.aborted === true) {
      throw new OvsdbClosedError('The OVSDB connection was aborted before it started.', { cause: signal.reason });
    }
    signal?.addEventListener('abort', client.onAbort, { once: true });
    client.loopDone = client.run();
    try {
      await client.waitForSession(options.connectTimeoutMs ?? 30_000);
    } catch (error) {
      await client.close();
      throw error;
    }
    return client;
  }

  /** The remote of the current session ('' while disconnected). */
  get remote(): string {
    return this.session === undefined ? '' : this.currentRemote;
  }

  get connected(): boolean {
    return this.session !== undefined && !this.session.closed;
  }

  async listDatabases(): Promise<string[]> {
    const result = await (await this.waitForSession()).request('list_dbs', []);
    if (!Array.isArray(result) || !result.every((name) => typeof name === 'string')) {
      throw new OvsdbProtocolError('The list_dbs reply is not an array of names; the server does not follow RFC 7047.');
    }
    return result as string[];
  }

  async getSchema(database: string): Promise<DatabaseSchema> {
    return this.schemaOn(await this.waitForSession(), database);
  }

  /**
   * Runs an RFC 7047 transaction. Resolves with the per-operation results; rejects with
   * OvsdbTransactionError when an operation or the commit failed (nothing was committed then).
   */
  async transact(database: string, operations: readonly unknown[]): Promise<unknown[]> {
    const session = await this.waitForSession();
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
        `The transaction on ${database} failed at ${where}: ${String(error)}${details === undefined ? '' : ` (${String(details)})`}. Nothing was committed; fix the operation and retry.`,
        results,
      );
    }
    return results;
  }

  /**
   * Keeps `cache` in step with `database` for as long as the client lives, across reconnections.
   * Resolves after the initial content is in the cache.
   */
  monitor(database: string, cache: TableCache): Promise<void> {
    if (cache.schema.name !== database) {
      return Promise.reject(
        new OvsdbSchemaError(`The cache was built for database "${cache.schema.name}", not "${database}": build it from that database's schema.`),
      );
    }
    if (this.closed) {
      return Promise.reject(new OvsdbClosedError('Cannot monitor: the OVSDB client is closed.'));
    }
    if (this.watches.some((watch) => watch.subscription.cache === cache)) {
      return Promise.reject(new OvsdbSchemaError('This cache is already monitored by this client: one monitor feeds one cache.'));
    }
    const methods = this.options.monitorMethods ?? MONITOR_METHODS;
    const subscription = new MonitorSubscription(database, cache, `${database}#${this.nextMonitorId++}`, methods, (error) =>
      this.report(error),
    );
    return new Promise<void>((resolve, reject) => {
      const watch: Watch = { subscription, synced: false, resolve, reject };
      this.watches.push(watch);
      if (this.session !== undefined && !this.session.closed) {
        void this.startWatch(watch, this.session);
      }
    });
  }

  /**
   * Stops feeding `cache` (the server is sent monitor_cancel), so a cache whose owner is done with
   * it does not stay mirrored for the client's lifetime. A monitor() of it still waiting for its
   * initial sync rejects with OvsdbClosedError. Does nothing for a cache this client does not feed.
   */
  async unmonitor(cache: TableCache): Promise<void> {
    const index = this.watches.findIndex((watch) => watch.subscription.cache === cache);
    if (index < 0) {
      return;
    }
    const watch = this.watches.splice(index, 1)[0]!;
    if (!watch.synced) {
      watch.reject(new OvsdbClosedError('The monitor was cancelled with unmonitor() before its initial sync.'));
    }
    const { subscription } = watch;
    const session = subscription.session;
    subscription.session = undefined;
    if (session === undefined || session.closed) {
      return;
    }
    this.cancelledMonitors.add(subscription.id);
    try {
      await session.request('monitor_cancel', [subscription.id]);
    } catch (error) {
      // An RPC error means the server holds no such monitor (its start failed): nothing left to cancel.
      if (!(error instanceof OvsdbRpcError || error instanceof OvsdbDisconnectedError || error instanceof OvsdbClosedError)) {
        throw error;
      }
    } finally {
      this.cancelledMonitors.delete(subscription.id);
    }
  }

  /** Closes the connection for good; pending requests and unsynced monitors reject with OvsdbClosedError. */
  async close(): Promise<void> {
    if (this.closed) {
      return this.loopDone;
    }
    this.closed = true;
    this.options.signal?.removeEventListener('abort', this.onAbort);
    this.stopper.abort();
    const error = new OvsdbClosedError('The OVSDB client was closed.');
    this.opening?.close(error);
    for (const waiter of this.waiters) {
      waiter.reject(error);
    }
    this.waiters.clear();
    for (const watch of this.watches.splice(0)) {
      if (!watch.synced) {
        watch.reject(error);
      }
    }
    await this.loopDone;
  }

  private async run(): Promise<void> {
    const { backoff } = this;
    let failuresInRound = 0;
    for (let index = 0; !this.closed; index = (index + 1) % this.endpoints.length) {
      const remote = this.endpoints[index]!;
      const started = Date.now();
      const { connected, error } = await this.runSession(remote);
      let retryInMs: number | undefined;
      if (!this.closed) {
        // A server that accepts and then drops us at once must not get a reconnection storm.
        if (connected && Date.now() - started >= STABLE_SESSION_MS) {
          failuresInRound = 0;
          backoff.reset();
        } else {
          failuresInRound++;
        }
        retryInMs = failuresInRound >= this.endpoints.length ? backoff.next() : 0;
      }
      this.emitStatus({ state: 'disconnected', remote: formatRemote(remote), error: this.closed ? undefined : error, retryInMs });
      if (retryInMs !== undefined && retryInMs > 0) {
        failuresInRound = 0;
        await sleep(retryInMs, undefined, { signal: this.stopper.signal }).catch(() => undefined);
      }
    }
  }

  /** One session with one remote, from connecting to its end. */
  private async runSession(remote: Endpoint): Promise<{ connected: boolean; error: Error | undefined }> {
    const name = formatRemote(remote);
    this.emitStatus({ state: 'connecting', remote: name });
    let session: JsonRpcSession | undefined;
    let connected = false;
    try {
      const socket = await openStream(remote, this.options.attemptTimeoutMs ?? 5000, this.stopper.signal);
      let ended!: (error: Error | undefined) => void;
      const closed = new Promise<Error | undefined>((resolve) => (ended = resolve));
      const current: JsonRpcSession = new JsonRpcSession(
        socket,
        {
          onNotification: (method, params) => this.onNotification(current, method, params),
          onAnomaly: (error) => this.report(error),
          onClose: (error) => ended(error),
        },
        this.options.inactivityProbeMs ?? 5000,
      );
      session = current;
      this.opening = current;
      if (this.closed) {
        current.close(new OvsdbClosedError('The OVSDB client was closed.'));
      }
      this.schemas.clear();
      await this.qualify(current, name);
      connected = true;
      this.session = current;
      this.currentRemote = name;
      this.stats.sessions++;
      this.lastErrors.delete(name);
      this.emitStatus({ state: 'connected', remote: name });
      for (const waiter of this.waiters) {
        waiter.resolve(current);
      }
      this.waiters.clear();
      for (const watch of [...this.watches]) {
        void this.startWatch(watch, current);
      }
      const error = await closed;
      if (error !== undefined) {
        this.lastErrors.set(name, error);
      }
      return { connected, error };
    } catch (error) {
      const reason = error instanceof Error ? error : new Error(String(error));
      session?.close(reason);
      this.lastErrors.set(name, reason);
      return { connected, error: reason };
    } finally {
      if (this.session === session) {
        this.session = undefined;
      }
      if (this.opening === session) {
        this.opening = undefined;
      }
    }
  }

  /**
   * Refuses a member whose _Server.Database rows say it is cut off from its cluster (or, with
   * leaderOnly, is not the leader), and keeps watching so a later loss drops the session.
   */
  private async qualify(session: JsonRpcSession, name: string): Promise<void> {
    let schema: DatabaseSchema;
    try {
      schema = await this.schemaOn(session, '_Server');
    } catch (error) {
      if (error instanceof OvsdbRpcError) {
        // Servers before OVS 2.9 have no _Server database: nothing to judge.
        return;
      }
      throw error;
    }
    const cache = new TableCache(schema, { Database: { columns: [...SERVER_DATABASE_COLUMNS] } });
    const watch = new MonitorSubscription('_Server', cache, '_Server', ['monitor_cond', 'monitor'], (error) => this.report(error));
    // Routed before the reply is awaited: an update in the same read as the reply is applied first.
    this.serverWatch = watch;
    await watch.start(session, schema);
    const rows = cache.table<ServerDatabaseRow>('Database');
    const reason = this.judge.unsuitableReason(rows);
    if (reason !== undefined) {
      throw new OvsdbConnectionError(`Skipped ${name}: ${reason}.`);
    }
    cache.on('batch', () => {
      const lost = this.judge.unsuitableReason(rows);
      if (lost !== undefined) {
        session.close(new OvsdbConnectionError(`Left ${name}: ${lost}.`));
      }
    });
  }

  private async startWatch(watch: Watch, session: JsonRpcSession): Promise<void> {
    const { subscription } = watch;
    if (subscription.session === session) {
      return;
    }
    let result: MonitorSyncResult;
    try {
      const schema = await this.schemaOn(session, subscription.database);
      result = await subscription.start(session, schema);
    } catch (error) {
      this.watchFailed(watch, session, error);
      return;
    }
    if (!this.watches.includes(watch)) {
      return;
    }
    if (!watch.synced) {
      watch.synced = true;
      watch.resolve();
    }
    this.emitStatus({ state: 'synced', remote: this.currentRemote, database: subscription.database, ...result });
  }

  private watchFailed(watch: Watch, session: JsonRpcSession, error: unknown): void {
    if (session.closed || error instanceof OvsdbDisconnectedError || error instanceof OvsdbClosedError) {
      return;
    }
    const reason = error instanceof Error ? error : new Error(String(error));
    if (!(reason instanceof OvsdbRpcError)) {
      // Not the server refusing the monitor: a new session resyncs the cache from scratch.
      session.close(reason);
      return;
    }
    // The server refuses this monitor for good (unknown database, say): stop retrying it.
    const index = this.watches.indexOf(watch);
    if (index >= 0) {
      this.watches.splice(index, 1);
    }
    if (watch.synced) {
      this.report(reason);
    } else {
      watch.reject(reason);
    }
  }

  private onNotification(session: JsonRpcSession, method: string, params: unknown): void {
    try {
      if (this.serverWatch?.handle(session, method, params) === true) {
        return;
      }
      for (const { subscription } of this.watches) {
        if (subscription.handle(session, method, params)) {
          return;
        }
      }
    } catch (error) {
      this.report(
        new OvsdbProtocolError(`Applying a "${method}" notification failed: ${(error as Error).message}`, { cause: error }),
      );
      return;
    }
    if (method !== 'update' && method !== 'update2' && method !== 'update3') {
      this.report(new OvsdbProtocolError(`The server sent a "${method}" notification this client does not use; ignored.`));
      return;
    }
    const monitorId = Array.isArray(params) ? params[0] : undefined;
    if (typeof monitorId === 'string' && this.cancelledMonitors.has(monitorId)) {
      return;
    }
    this.report(
      new OvsdbProtocolError(`The server sent an "${method}" notification for monitor ${JSON.stringify(monitorId)}, which no cache here uses (or is malformed); ignored.`),
    );
  }

  private schemaOn(session: JsonRpcSession, database: string): Promise<DatabaseSchema> {
    let schema = this.schemas.get(database);
    if (schema === undefined) {
      schema = session.request('get_schema', [database]).then(parseSchema);
      this.schemas.set(database, schema);
      schema.catch(() => this.schemas.delete(database));
    }
    return schema;
  }

  private waitForSession(timeoutMs?: number): Promise<JsonRpcSession> {
    if (this.closed) {
      return Promise.reject(new OvsdbClosedError('The OVSDB client is closed.'));
    }
    if (this.session !== undefined && !this.session.closed) {
      return Promise.resolve(this.session);
    }
    return new Promise<JsonRpcSession>((resolve, reject) => {
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              this.waiters.delete(waiter);
              reject(this.unreachable(timeoutMs));
            }, timeoutMs);
      const waiter: SessionWaiter = {
        resolve: (session) => {
          clearTimeout(timer);
          resolve(session);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      this.waiters.add(waiter);
    });
  }

  private unreachable(timeoutMs: number): OvsdbConnectionError {
    const causes = this.remotes.map((remote) => {
      const name = formatRemote(remote);
      return `${name}: ${this.lastErrors.get(name)?.message ?? 'not tried yet'}`;
    });
    return new OvsdbConnectionError(
      `No OVSDB remote was usable within ${timeoutMs} ms (${causes.join('; ')}). Check that ovsdb-server listens there, the TLS credentials, and for a cluster that a leader is elected.`,
    );
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

  /**
   * Each 'status' listener is called on its own: one that throws is reported, and must neither keep
   * the others from hearing the status nor stop the reconnection loop.
   */
  private emitStatus(status: OvsdbStatus): void {
    for (const listener of this.rawListeners('status') as ((status: OvsdbStatus) => void)[]) {
      try {
        listener.call(this, status);
      } catch (error) {
        this.report(new OvsdbListenerError("The OVSDB client's 'status' listeners", [error]));
      }
    }
  }
}
