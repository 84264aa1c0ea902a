import { OvsdbListenerError, OvsdbProtocolError, OvsdbRpcError } from '../errors';
import type { TableCache } from './cache';
import type { JsonRpcSession } from './json-rpc';
import type { DatabaseSchema } from './schema';

export type MonitorMethod = 'monitor_cond_since' | 'monitor_cond' | 'monitor';

/** Newest first: each is tried in turn while the server answers "unknown method". */
export const MONITOR_METHODS: readonly MonitorMethod[] = ['monitor_cond_since', 'monitor_cond', 'monitor'];

/** monitor_cond_since with this id asks for everything: there is no transaction to resume from. */
const NO_TRANSACTION = '00000000-0000-0000-0000-000000000000';

export interface MonitorSyncResult {
  readonly method: MonitorMethod;
  /** The server had our last transaction id in its history and sent only what changed since. */
  readonly resumed: boolean;
  /** Selected tables ("T") and columns ("T.c") the server's schema lacks; cached with defaults. */
  readonly missing: readonly string[];
}

/**
 * One cache kept in step with one database across sessions: builds the monitor request the
 * server understands, applies the initial reply, routes update/update2/update3 notifications and
 * remembers the last transaction id so a new session resumes instead of reloading.
 */
export class MonitorSubscription {
  /** The session this subscription is active on, so it is started once per session. */
  session: JsonRpcSession | undefined;
  private lastTransactionId = NO_TRANSACTION;

  constructor(
    readonly database: string,
    readonly cache: TableCache,
    readonly id: string,
    private readonly methods: readonly MonitorMethod[],
    /** Receives what the cache's listeners threw; the cache itself is complete then, so the feed goes on. */
    private readonly reportListenerError: (error: OvsdbListenerError) => void,
  ) {}

  /** Starts monitoring on a new session; resolves once the initial content is in the cache. */
  async start(session: JsonRpcSession, serverSchema: DatabaseSchema): Promise<MonitorSyncResult> {
    this.session = session;
    const { tables, missing } = this.requestedColumns(serverSchema);
    for (const method of this.methods) {
      let reply: unknown;
      try {
        reply = await session.request(method, this.params(method, tables));
      } catch (error) {
        if (error instanceof OvsdbRpcError && JSON.stringify(error.reply).includes('unknown method')) {
          continue;
        }
        throw error;
      }
      return { method, resumed: this.applyInitial(method, reply), missing };
    }
    throw new OvsdbProtocolError(
      `The server knows none of ${this.methods.join(', ')} for database "${this.database}"; it is not an OVSDB server this client can monitor.`,
    );
  }

  /** Applies a notification if it belongs to this subscription's active monitor. */
  handle(session: JsonRpcSession, method: string, params: unknown): boolean {
    if (session !== this.session || !Array.isArray(params) || params[0] !== this.id) {
      return false;
    }
    if (method === 'update3' && typeof params[1] === 'string') {
      this.apply(() => this.cache.applyUpdate2(params[2]));
      this.lastTransactionId = params[1];
    } else if (method === 'update2') {
      this.apply(() => this.cache.applyUpdate2(params[1]));
    } else if (method === 'update') {
      this.apply(() => this.cache.applyUpdate(params[1]));
    } else {
      return false;
    }
    return true;
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

  private params(method: MonitorMethod, tables: ReadonlyMap<string, string[]>): unknown[] {
    const requests: Record<string, unknown> = {};
    for (const [table, columns] of tables) {
      requests[table] = method === 'monitor' ? { columns } : [{ columns }];
    }
    const params: unknown[] = [this.database, this.id, requests];
    if (method === 'monitor_cond_since') {
      params.push(this.lastTransactionId);
    }
    return params;
  }

  /** Returns whether the server resumed from our last transaction (so nothing was reloaded). */
  private applyInitial(method: MonitorMethod, reply: unknown): boolean {
    if (method === 'monitor_cond_since') {
      if (!Array.isArray(reply) || typeof reply[0] !== 'boolean' || typeof reply[1] !== 'string') {
        throw new OvsdbProtocolError('The monitor_cond_since reply is not [found, last-txn-id, updates]; the server does not follow the OVSDB protocol.');
      }
      const resumed = reply[0] && this.lastTransactionId !== NO_TRANSACTION;
      this.apply(() => this.cache.applyUpdate2(reply[2] ?? {}, { snapshot: !reply[0] }));
      this.lastTransactionId = reply[1];
      return resumed;
    }
    if (method === 'monitor_cond') {
      this.apply(() => this.cache.applyUpdate2(reply ?? {}, { snapshot: true }));
    } else {
      this.apply(() => this.cache.applyUpdate(reply ?? {}, { snapshot: true }));
    }
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
      this.reportListenerError(error);
    }
  }
}
