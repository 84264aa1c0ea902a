import { OvsdbClosedError, OvsdbDisconnectedError, OvsdbListenerError, OvsdbRpcError } from '../errors';
import type { TableCache } from './cache';
import type { JsonRpcSession } from './json-rpc';
import { MonitorSubscription, type MonitorMethod, type MonitorSyncResult } from './monitor';
import type { DatabaseSchema } from './schema';

/** Why a monitored cache was reloaded from scratch on a live session. */
export type OvsdbResyncReason =
  /** The cache met updates that contradict it (an unknown row modified, a known one inserted). */
  | 'inconsistent'
  /** The server cancelled the monitor (monitor_canceled): the database was converted to a new schema. */
  | 'schema-changed';

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
      const watch: Watch = { subscription, synced: false, resolve, reject };
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

  /** Monitors still waiting for their initial sync reject with `error`; the set is emptied. */
  close(error: Error): void {
    for (const watch of this.watches.splice(0)) {
      if (!watch.synced) {
        watch.reject(error);
      }
    }
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
    try {
      const schema = await this.hooks.schemaOf(session, subscription.database, freshSchema);
      result = await subscription.start(session, schema, reload);
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
  }
}
