import { OvsdbClosedError, OvsdbDisconnectedError, OvsdbListenerError, OvsdbRpcError, OvsdbSchemaError } from '../errors';
import type { TableCache } from './cache';
import type { JsonRpcSession } from './json-rpc';
import { MonitorSubscription, type MonitorMethod, type MonitorSyncResult } from './monitor';
import type { DatabaseSchema } from './schema';

/** Why a monitored cache was reloaded from scratch on a live session. */
export type OvsdbResyncReason =
  /** The cache met updates that contradict it (an unknown row modified, a known one inserted). */
  | 'inconsistent'
  /** The server cancelled the monitor (monitor_canceled): the database was converted to a new schema. */
  | 'schema-changed'
  /** The cache's selection was widened (a shared mirror gained a reader that reads more): OvsdbClient.resync(). */
  | 'selection-widened';

export interface OvsdbResync {
  readonly database: string;
  readonly reason: OvsdbResyncReason;
  readonly remote: string;
}

export interface MonitorSetHooks {
  /** The database's schema on `session`; `fresh` drops what was read before (a conversion changed it). */
  schemaOf(session: JsonRpcSession, database: string, fresh: boolean): Promise<DatabaseSchema>;
  synced(database: string, result: MonitorSyncResult): void;
  resyncing(database: string, reason: OvsdbResyncReason): void;
  report(error: Error): void;
}

interface Watch {
  readonly subscription: MonitorSubscription;
  synced: boolean;
  readonly resyncs: ResyncWaiter[];
  resolve(): void;
  reject(error: Error): void;
}

interface ResyncWaiter {
  /** The subscription's requests when the resync was asked for: a later one asks for what the cache selects now. */
  readonly after: number;
  resolve(): void;
  reject(error: Error): void;
}

/**
 * The caches one client keeps in step with the server: starts their monitors on each new session,
 * routes notifications to them, and reloads a cache from scratch when it diverged from the server
 * or the server cancelled its monitor because the database was converted.
 */
export class MonitorSet {
  private readonly watches: Watch[] = [];
  /** Monitors being cancelled with unmonitor(): updates the server sent before it saw monitor_cancel are expected. */
  private readonly cancelling = new Set<string>();
  private nextMonitorId = 1;

  constructor(private readonly hooks: MonitorSetHooks) {}

  has(cache: TableCache): boolean {
    return this.watches.some((watch) => watch.subscription.cache === cache);
  }

  /** Adds a cache; resolves after its initial sync (started at once when `session` is given). */
  add(database: string, cache: TableCache, methods: readonly MonitorMethod[], session: JsonRpcSession | undefined): Promise<void> {
    const subscription = new MonitorSubscription(database, cache, `${database}#${this.nextMonitorId++}`, methods, {
      reportListenerError: (error: OvsdbListenerError) => this.hooks.report(error),
      // Deferred: the divergence is found while an update is applied, inside the session's dispatch.
      diverged: (diverging) => queueMicrotask(() => void this.reload(diverging, 'inconsistent')),
    });
    return new Promise<void>((resolve, reject) => {
      const watch: Watch = { subscription, synced: false, resyncs: [], resolve, reject };
      this.watches.push(watch);
      if (session !== undefined) {
        void this.start(watch, session, false);
      }
    });
  }

  /** Stops feeding `cache`; see OvsdbClient.unmonitor(). */
  async remove(cache: TableCache): Promise<void> {
    const index = this.watches.findIndex((watch) => watch.subscription.cache === cache);
    if (index < 0) {
      return;
    }
    const watch = this.watches.splice(index, 1)[0]!;
    if (!watch.synced) {
      watch.reject(new OvsdbClosedError('The monitor was cancelled with unmonitor() before its initial sync.'));
    }
    rejectResyncs(watch, new OvsdbClosedError('The monitor was cancelled with unmonitor() before its resync finished.'));
    const session = watch.subscription.session;
    const id = watch.subscription.stop();
    if (session === undefined || session.closed || id === undefined) {
      return;
    }
    this.cancelling.add(id);
    try {
      await session.request('monitor_cancel', [id]);
    } catch (error) {
      // An RPC error means the server holds no such monitor (its start failed): nothing left to cancel.
      if (!(error instanceof OvsdbRpcError || error instanceof OvsdbDisconnectedError || error instanceof OvsdbClosedError)) {
        throw error;
      }
    } finally {
      this.cancelling.delete(id);
    }
  }

  /** Starts every monitor on a session that just became usable. */
  startAll(session: JsonRpcSession): void {
    for (const watch of [...this.watches]) {
      void this.start(watch, session, false);
    }
  }

  /** Monitors still waiting for their initial sync, and resyncs not done yet, reject with `error`; the set is emptied. */
  close(error: Error): void {
    for (const watch of this.watches.splice(0)) {
      if (!watch.synced) {
        watch.reject(error);
      }
      rejectResyncs(watch, error);
    }
  }

  /**
   * Reloads `cache` from scratch; resolves once a reload begun after this call is in the cache
   * (on this session, or on the next one if this one is gone: a resume could not fill the columns
   * a widened selection added, so the next session reloads too).
   */
  resync(cache: TableCache, reason: OvsdbResyncReason): Promise<void> {
    const watch = this.watches.find((candidate) => candidate.subscription.cache === cache);
    if (watch === undefined) {
      return Promise.reject(new OvsdbSchemaError('This cache is not monitored by this client: monitor() it first.'));
    }
    watch.subscription.forgetTransaction();
    const done = new Promise<void>((resolve, reject) => watch.resyncs.push({ after: watch.subscription.requests, resolve, reject }));
    void this.reload(watch.subscription, reason);
    return done;
  }

  /** Routes an update or a monitor_canceled notification; false when no monitor here owns it. */
  handle(session: JsonRpcSession, method: string, params: unknown): boolean {
    if (method === 'monitor_canceled') {
      const id: unknown = Array.isArray(params) ? (params[0] as unknown) : undefined;
      const watch = this.watches.find(({ subscription }) => subscription.canceledByServer(session, id));
      if (watch !== undefined) {
        void this.reload(watch.subscription, 'schema-changed');
      }
      return watch !== undefined || (typeof id === 'string' && this.cancelling.has(id));
    }
    for (const { subscription } of this.watches) {
      if (subscription.handle(session, method, params)) {
        return true;
      }
    }
    const id: unknown = Array.isArray(params) ? (params[0] as unknown) : undefined;
    return typeof id === 'string' && this.cancelling.has(id);
  }

  /** Reloads a cache from scratch on its current session: a resume cannot repair a divergence. */
  private async reload(subscription: MonitorSubscription, reason: OvsdbResyncReason): Promise<void> {
    const watch = this.watches.find((candidate) => candidate.subscription === subscription);
    const session = subscription.session;
    if (watch === undefined || session === undefined || session.closed) {
      // A new session reloads it anyway.
      return;
    }
    this.hooks.resyncing(subscription.database, reason);
    await this.start(watch, session, true, reason === 'schema-changed');
  }

  private async start(watch: Watch, session: JsonRpcSession, reload: boolean, freshSchema = false): Promise<void> {
    const { subscription } = watch;
    if (subscription.session === session && !reload) {
      return;
    }
    let result: MonitorSyncResult;
    let request: number;
    try {
      const schema = await this.hooks.schemaOf(session, subscription.database, freshSchema);
      const starting = subscription.start(session, schema, reload);
      // start() has built its request synchronously: this number is the request it sent.
      request = subscription.requests;
      result = await starting;
    } catch (error) {
      this.failed(watch, session, error);
      return;
    }
    if (!this.watches.includes(watch)) {
      return;
    }
    if (!watch.synced) {
      watch.synced = true;
      watch.resolve();
    }
    for (const waiter of watch.resyncs.filter(({ after }) => after < request)) {
      watch.resyncs.splice(watch.resyncs.indexOf(waiter), 1);
      waiter.resolve();
    }
    this.hooks.synced(subscription.database, result);
  }

  private failed(watch: Watch, session: JsonRpcSession, error: unknown): void {
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
      this.hooks.report(reason);
    } else {
      watch.reject(reason);
    }
    rejectResyncs(watch, reason);
  }
}

function rejectResyncs(watch: Watch, error: Error): void {
  for (const waiter of watch.resyncs.splice(0)) waiter.reject(error);
}
