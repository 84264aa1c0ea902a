import { OvsdbClosedError, OvsdbListenerError, OvsdbProtocolError, OvsdbRpcError } from '../errors';
import type { TableCache } from './cache';
import type { JsonRpcSession } from './json-rpc';
import type { DatabaseSchema } from './schema';

export type MonitorMethod = 'monitor_cond_since' | 'monitor_cond' | 'monitor';

/** Newest first: each is tried in turn while the server answers "unknown method". */
export const MONITOR_METHODS: readonly MonitorMethod[] = ['monitor_cond_since', 'monitor_cond', 'monitor'];

/** monitor_cond_since with this id asks for everything: there is no transaction to resume from. */
const NO_TRANSACTION = '00000000-0000-0000-0000-000000000000';

const UPDATE_METHODS: ReadonlySet<string> = new Set(['update', 'update2', 'update3']);

export interface MonitorSyncResult {
  readonly method: MonitorMethod;
  /** The server had our last transaction id in its history and sent only what changed since. */
  readonly resumed: boolean;
  /** Selected tables ("T") and columns ("T.c") the server's schema lacks; cached with defaults. */
  readonly missing: readonly string[];
}

export interface MonitorHooks {
  /** Receives what the cache's listeners threw; the cache itself is complete then, so the feed goes on. */
  reportListenerError(error: OvsdbListenerError): void;
  /**
   * The cache met an update it could not apply consistently (a modification of a row it lacks,
   * say): it no longer mirrors the server, and only a full reload repairs that. Called once per
   * monitor, synchronously while the update is applied.
   */
  diverged(subscription: MonitorSubscription): void;
}

/**
 * One cache kept in step with one database across sessions: builds the monitor request the
 * server understands, applies the initial reply, routes update/update2/update3 notifications and
 * remembers the last transaction id so a new session resumes instead of reloading.
 *
 * Each start uses a fresh monitor id. Notifications for it that arrive before its reply is
 * applied (in the same read as the reply, typically, while a writer commits) are held and applied
 * after the reply, in order: applied first, the reply's snapshot would overwrite them.
 */
export class MonitorSubscription {
  /** The session this subscription is active on, so it is started once per session. */
  session: JsonRpcSession | undefined;
  private activeId: string | undefined;
  private starts = 0;
  private requested = 0;
  /** Notifications for activeId received before its reply was applied; undefined once it was. */
  private held: [method: string, params: unknown[]][] | undefined;
  /** Monitors this subscription left on `session`: their trailing updates are expected, and ignored. */
  private readonly retired = new Set<string>();
  private lastTransactionId = NO_TRANSACTION;
  /** cache.stats.inconsistentRows when it was last looked at. */
  private inconsistencies: number;
  private divergedId: string | undefined;

  constructor(
    readonly database: string,
    readonly cache: TableCache,
    /** Monitor ids are this prefix and a start counter; unique within the client. */
    private readonly idPrefix: string,
    private readonly methods: readonly MonitorMethod[],
    private readonly hooks: MonitorHooks,
  ) {
    this.inconsistencies = cache.stats.inconsistentRows;
  }

  /** Monitor requests built so far, each with what the cache selected at that moment. */
  get requests(): number {
    return this.requested;
  }

  /** The id of the monitor the server holds (or is setting up) for this subscription. */
  get id(): string | undefined {
    return this.activeId;
  }

  /**
   * Starts monitoring on `session`; resolves once the initial content is in the cache. With
   * `reload`, the server sends everything (no resume) and the monitor this subscription had on
   * the same session is cancelled first. Rejects with OvsdbClosedError when stop() or another
   * start() superseded it before the reply came.
   */
  async start(session: JsonRpcSession, serverSchema: DatabaseSchema, reload = false): Promise<MonitorSyncResult> {
    this.retire(session);
    this.session = session;
    if (reload) {
      this.lastTransactionId = NO_TRANSACTION;
    }
    const { tables, missing } = this.requestedColumns(serverSchema);
    this.requested++;
    for (const method of this.methods) {
      const id = `${this.idPrefix}.${++this.starts}`;
      this.activeId = id;
      this.held = [];
      let reply: unknown;
      try {
        reply = await session.request(method, this.params(method, id, tables));
      } catch (error) {
        if (this.activeId === id) {
          this.activeId = undefined;
          this.held = undefined;
        }
        if (error instanceof OvsdbRpcError && JSON.stringify(error.reply).includes('unknown method')) {
          continue;
        }
        throw error;
      }
      if (this.session !== session || this.activeId !== id) {
        throw new OvsdbClosedError(`The monitor of ${this.database} was stopped or restarted before its initial reply came.`);
      }
      const held = this.held;
      this.held = undefined;
      const resumed = this.applyInitial(method, reply, reload);
      for (const [heldMethod, params] of held) {
        if (this.activeId !== id) {
          break;
        }
        this.applyNotification(heldMethod, params);
      }
      return { method, resumed, missing };
    }
    throw new OvsdbProtocolError(
      `The server knows none of ${this.methods.join(', ')} for database "${this.database}"; it is not an OVSDB server this client can monitor.`,
    );
  }

  /** The next start reloads everything instead of resuming: the cache's selection grew, and a resume would not fill the new columns. */
  forgetTransaction(): void {
    this.lastTransactionId = NO_TRANSACTION;
  }

  /**
   * Leaves the session: the cache stops following it. Returns the id of the monitor the server
   * may still hold, for the caller to cancel.
   */
  stop(): string | undefined {
    const id = this.activeId;
    if (id !== undefined) {
      this.retired.add(id);
    }
    this.activeId = undefined;
    this.held = undefined;
    this.session = undefined;
    return id;
  }

  /**
   * Takes a notification that belongs to this subscription: an update of its monitor (applied,
   * or held until the initial reply is in), or a trailing update of a monitor it left.
   */
  handle(session: JsonRpcSession, method: string, params: unknown): boolean {
    if (session !== this.session || !UPDATE_METHODS.has(method) || !Array.isArray(params) || typeof params[0] !== 'string') {
      return false;
    }
    if (params[0] !== this.activeId) {
      return this.retired.has(params[0]);
    }
    if (this.held !== undefined) {
      this.held.push([method, params]);
    } else {
      this.applyNotification(method, params);
    }
    return true;
  }

  /**
   * The server cancelled this subscription's monitor (monitor_canceled: the database was
   * converted to a new schema or removed). Returns whether the id was this subscription's.
   */
  canceledByServer(session: JsonRpcSession, monitorId: unknown): boolean {
    if (session !== this.session || monitorId !== this.activeId || monitorId === undefined) {
      return false;
    }
    this.activeId = undefined;
    this.held = undefined;
    return true;
  }

  /** Before a new start: the previous monitor on the same session is retired and cancelled. */
  private retire(session: JsonRpcSession): void {
    if (this.session !== session) {
      this.retired.clear();
      return;
    }
    const previous = this.activeId;
    if (previous !== undefined) {
      this.retired.add(previous);
      session.request('monitor_cancel', [previous]).catch(() => undefined);
    }
  }

  private applyNotification(method: string, params: unknown[]): void {
    if (method === 'update3' && typeof params[1] === 'string') {
      this.apply(() => this.cache.applyUpdate2(params[2]));
      this.lastTransactionId = params[1];
    } else if (method === 'update2') {
      this.apply(() => this.cache.applyUpdate2(params[1]));
    } else if (method === 'update') {
      this.apply(() => this.cache.applyUpdate(params[1]));
    } else {
      throw new OvsdbProtocolError(`An "${method}" notification of monitor ${String(params[0])} lacks its transaction id; ignored.`);
    }
    this.checkConsistency();
  }

  private checkConsistency(): void {
    const seen = this.cache.stats.inconsistentRows;
    if (seen === this.inconsistencies) {
      return;
    }
    this.inconsistencies = seen;
    if (this.activeId !== undefined && this.divergedId !== this.activeId) {
      this.divergedId = this.activeId;
      this.hooks.diverged(this);
    }
  }

  private requestedColumns(serverSchema: DatabaseSchema): { tables: Map<string, string[]>; missing: string[] } {
    const tables = new Map<string, string[]>();
    const missing: string[] = [];
    for (const [table, columns] of this.cache.monitoredColumns()) {
      const served = serverSchema.tables.get(table);
      if (served === undefined) {
        missing.push(table);
        continue;
      }
      const available = columns.filter((column) => served.columns.has(column));
      missing.push(...columns.filter((column) => !served.columns.has(column)).map((column) => `${table}.${column}`));
      tables.set(table, available);
    }
    return { tables, missing };
  }

  private params(method: MonitorMethod, id: string, tables: ReadonlyMap<string, string[]>): unknown[] {
    const requests: Record<string, unknown> = {};
    for (const [table, columns] of tables) {
      requests[table] = method === 'monitor' ? { columns } : [{ columns }];
    }
    const params: unknown[] = [this.database, id, requests];
    if (method === 'monitor_cond_since') {
      params.push(this.lastTransactionId);
    }
    return params;
  }

  /** Returns whether the server resumed from our last transaction (so nothing was reloaded). */
  private applyInitial(method: MonitorMethod, reply: unknown, reload: boolean): boolean {
    if (method === 'monitor_cond_since') {
      if (!Array.isArray(reply) || typeof reply[0] !== 'boolean' || typeof reply[1] !== 'string') {
        throw new OvsdbProtocolError(
          'The monitor_cond_since reply is not [found, last-txn-id, updates]; the server does not follow the OVSDB protocol.',
        );
      }
      const resumed = reply[0] && !reload && this.lastTransactionId !== NO_TRANSACTION;
      this.apply(() => this.cache.applyUpdate2(reply[2] ?? {}, { snapshot: !resumed }));
      this.lastTransactionId = reply[1];
      if (resumed) {
        // Changes since our transaction: they can contradict the cache like any update.
        this.checkConsistency();
      } else {
        this.inconsistencies = this.cache.stats.inconsistentRows;
      }
      return resumed;
    }
    if (method === 'monitor_cond') {
      this.apply(() => this.cache.applyUpdate2(reply ?? {}, { snapshot: true }));
    } else {
      this.apply(() => this.cache.applyUpdate(reply ?? {}, { snapshot: true }));
    }
    this.inconsistencies = this.cache.stats.inconsistentRows;
    return false;
  }

  /**
   * Failing listeners are reported, not thrown: the update is in the cache, so the transaction id
   * must advance, or a resume would replay it onto rows that already have it.
   */
  private apply(update: () => void): void {
    try {
      update();
    } catch (error) {
      if (!(error instanceof OvsdbListenerError)) {
        throw error;
      }
      this.hooks.reportListenerError(error);
    }
  }
}
