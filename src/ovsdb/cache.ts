import { EventEmitter } from 'node:events';
import { OvsdbListenerError, OvsdbProtocolError, OvsdbSchemaError } from '../errors';
import { applyDatumDiff, decodeDatum, defaultValue, valuesEqual } from './datum';
import { isJsonObject } from './json-object';
import { objectMembers, objectSize } from './lazy-json';
import type { Row, Value } from './row';
import { requireColumn, requireTable, type ColumnSchema, type DatabaseSchema } from './schema';
import { ValuePool } from './value-pool';
import { TableStore, type TableView } from './table-store';

/**
 * Which tables and columns to cache, which columns get a secondary index, and which columns'
 * values repeat across many rows (a logical flow's datapath and {stage-name, source}): equal
 * values of a `shared` column are kept once, which for 100,000 rows saves tens of MB.
 */
export type CacheSelection = Readonly<
  Record<string, { readonly columns: readonly string[]; readonly indexes?: readonly string[]; readonly shared?: readonly string[] }>
>;

export interface ApplyOptions {
  /**
   * The message is a complete snapshot (a monitor reply after a resync): rows of the selected
   * tables that it does not mention are deleted, and rows it repeats unchanged emit no 'change'.
   */
  readonly snapshot?: boolean;
}

/** Row updates the cache could not apply (each also reported with a 'malformed' event), and failing listeners. */
export interface CacheStats {
  /** Row updates whose shape or values did not match the schema. */
  malformedRows: number;
  /** modify/delete of an unknown row, or an insert of a known one: the feed and the cache disagree. */
  inconsistentRows: number;
  /** Row updates for tables outside the selection. */
  unselectedTableRows: number;
  /** Listener calls that threw; the update went on, and applyUpdate*() threw OvsdbListenerError at its end. */
  failedListenerCalls: number;
}

export interface TableCacheEvents {
  change: [table: string, uuid: string, oldRow: Row | undefined, newRow: Row | undefined];
  batch: [];
  malformed: [table: string, uuid: string, error: Error];
}

/**
 * A typed in-memory copy of selected OVSDB tables, fed only by monitor updates. It does no I/O,
 * so anything that yields RFC 7047 update/update2 messages can drive it.
 */
export class TableCache extends EventEmitter<TableCacheEvents> {
  readonly schema: DatabaseSchema;
  readonly stats: CacheStats = { malformedRows: 0, inconsistentRows: 0, unselectedTableRows: 0, failedListenerCalls: 0 };
  private readonly stores = new Map<string, TableStore>();
  private readonly pool = new ValuePool();
  /** What listeners threw during the message being applied, rethrown once the message is complete. */
  private listenerErrors: unknown[] = [];

  constructor(schema: DatabaseSchema, selection: CacheSelection) {
    super();
    this.schema = schema;
    for (const [tableName, { columns, indexes = [], shared = [] }] of Object.entries(selection)) {
      const table = requireTable(schema, tableName);
      const selected = [...new Set(columns)].map((column) => requireColumn(table, column));
      this.stores.set(tableName, new TableStore(table, selected, indexes, shared));
    }
    if (this.stores.size === 0) {
      throw new OvsdbSchemaError('A TableCache needs at least one table in its selection.');
    }
  }

  /**
   * Adds tables, columns, indexes and shared columns to the selection (a new reader of a shared
   * mirror needs them). Rows already held get the new columns' default values: reload the cache
   * (OvsdbClient.resync()) for their real values. Returns whether the selection grew.
   */
  widen(selection: CacheSelection): boolean {
    const before = JSON.stringify(this.selection());
    for (const [tableName, { columns, indexes = [], shared = [] }] of Object.entries(selection)) {
      const table = requireTable(this.schema, tableName);
      const selected = [...new Set(columns)].map((column) => requireColumn(table, column));
      const store = this.stores.get(tableName);
      if (store === undefined) {
        this.stores.set(tableName, new TableStore(table, selected, indexes, shared));
      } else {
        store.widen(selected, indexes, shared);
      }
    }
    return JSON.stringify(this.selection()) !== before;
  }

  /** What the cache holds, in the form its constructor and widen() take. */
  selection(): CacheSelection {
    return Object.fromEntries(
      [...this.stores].map(([name, store]) => [
        name,
        { columns: store.columns.map((column) => column.name), indexes: store.indexedColumns(), shared: [...store.shared] },
      ]),
    );
  }

  /** The selected tables with their selected columns: what a monitor request must ask for. */
  monitoredColumns(): ReadonlyMap<string, readonly string[]> {
    return new Map([...this.stores].map(([name, store]) => [name, store.columns.map((column) => column.name)]));
  }

  table<R extends { readonly _uuid: string } = Row>(name: string): TableView<R> {
    const store = this.stores.get(name);
    if (store === undefined) {
      throw new OvsdbSchemaError(`Table "${name}" is not in this cache's selection: add it when creating the TableCache.`);
    }
    return store as unknown as TableView<R>;
  }

  /**
   * Applies an RFC 7047 <table-updates> ({table: {uuid: {old?, new?}}}) from monitor/update.
   * Throws OvsdbListenerError, after applying everything, when listeners threw.
   */
  applyUpdate(tableUpdates: unknown, options: ApplyOptions = {}): void {
    this.applyMessage(tableUpdates, options, (store, uuid, rowUpdate) => {
      const update = expectObject(rowUpdate);
      const existing = store.get(uuid);
      if (update.new === undefined || update.new === null) {
        this.remove(store, uuid, existing);
        return;
      }
      const values = expectObject(update.new);
      if (existing === undefined && update.old !== undefined) {
        this.inconsistent(store, uuid, 'a modification of a row the cache does not hold');
      }
      this.put(store, uuid, existing, buildRow(store, uuid, existing, values, 'replace', this.pool));
    });
  }

  /** Applies update2/update3 <table-updates2> ({table: {uuid: {initial|insert|modify|delete}}}); throws as applyUpdate(). */
  applyUpdate2(tableUpdates2: unknown, options: ApplyOptions = {}): void {
    this.applyMessage(tableUpdates2, options, (store, uuid, rowUpdate) => {
      const update = expectObject(rowUpdate);
      const existing = store.get(uuid);
      if ('delete' in update) {
        this.remove(store, uuid, existing);
      } else if (update.modify !== undefined) {
        if (existing === undefined) {
          this.inconsistent(store, uuid, 'a modification of a row the cache does not hold');
          return;
        }
        const diff = expectObject(update.modify);
        this.put(store, uuid, existing, buildRow(store, uuid, existing, diff, 'diff', this.pool));
      } else {
        const values = expectObject(update.initial ?? update.insert);
        if (existing !== undefined && update.insert !== undefined) {
          this.inconsistent(store, uuid, 'an insert of a row the cache already holds');
        }
        // initial/insert omit default-valued columns, so they start from defaults, never from `existing`.
        this.put(store, uuid, existing, buildRow(store, uuid, undefined, values, 'replace', this.pool));
      }
    });
  }

  private applyMessage(
    tableUpdates: unknown,
    options: ApplyOptions,
    applyRow: (store: TableStore, uuid: string, rowUpdate: unknown) => void,
  ): void {
    try {
      this.applyTables(tableUpdates, options, applyRow);
    } finally {
      this.listenerErrors = [];
    }
  }

  private applyTables(
    tableUpdates: unknown,
    options: ApplyOptions,
    applyRow: (store: TableStore, uuid: string, rowUpdate: unknown) => void,
  ): void {
    const seen = options.snapshot === true ? new Map<TableStore, Set<string>>() : undefined;
    if (!isJsonObject(tableUpdates)) {
      this.malformed('', '', new OvsdbProtocolError('An update message is not a JSON object of tables.'));
    }
    for (const [tableName, rows] of Object.entries(isJsonObject(tableUpdates) ? tableUpdates : {})) {
      const store = this.stores.get(tableName);
      if (!isJsonObject(rows)) {
        this.malformed(tableName, '', new OvsdbProtocolError(`The update of table "${tableName}" is not an object of rows.`));
        continue;
      }
      if (store === undefined) {
        this.stats.unselectedTableRows += objectSize(rows);
        continue;
      }
      const seenRows = new Set<string>();
      seen?.set(store, seenRows);
      for (const [uuid, readRowUpdate] of objectMembers(rows)) {
        seenRows.add(uuid);
        try {
          applyRow(store, uuid, readRowUpdate());
        } catch (error) {
          if (!(error instanceof OvsdbProtocolError)) {
            throw error;
          }
          this.malformed(tableName, uuid, error);
        }
      }
    }
    if (seen !== undefined) {
      for (const store of this.stores.values()) {
        const seenRows = seen.get(store);
        for (const uuid of store.uuids()) {
          if (seenRows === undefined || !seenRows.has(uuid)) {
            this.remove(store, uuid, store.get(uuid));
          }
        }
      }
    }
    this.notify('batch');
    if (this.listenerErrors.length > 0) {
      throw new OvsdbListenerError('TableCache listeners', this.listenerErrors);
    }
  }

  /**
   * Calls each listener on its own: one that throws must not keep the others (the decoder's
   * indexes) from seeing the change, nor stop the rest of the message from being applied.
   */
  private notify<K extends keyof TableCacheEvents>(event: K, ...args: TableCacheEvents[K]): void {
    for (const listener of this.rawListeners(event) as ((...values: TableCacheEvents[K]) => void)[]) {
      try {
        listener.apply(this, args);
      } catch (error) {
        this.stats.failedListenerCalls++;
        this.listenerErrors.push(error);
      }
    }
  }

  private put(store: TableStore, uuid: string, existing: Row | undefined, row: Row): void {
    if (existing !== undefined && rowsEqual(store.columns, existing, row)) {
      return;
    }
    store.put(row);
    this.notify('change', store.name, uuid, existing, row);
  }

  private remove(store: TableStore, uuid: string, existing: Row | undefined): void {
    if (existing === undefined) {
      this.inconsistent(store, uuid, 'a deletion of a row the cache does not hold');
      return;
    }
    store.remove(uuid);
    this.notify('change', store.name, uuid, existing, undefined);
  }

  private inconsistent(store: TableStore, uuid: string, what: string): void {
    this.stats.inconsistentRows++;
    this.notify(
      'malformed',
      store.name,
      uuid,
      new OvsdbProtocolError(`The server sent ${what} (${store.name} ${uuid}); the cache may be stale: reconnect to resync.`),
    );
  }

  private malformed(table: string, uuid: string, error: Error): void {
    this.stats.malformedRows++;
    this.notify('malformed', table, uuid, error);
  }
}

/**
 * Builds the next immutable row: columns named in `values` are decoded ('replace') or applied as
 * update2 diffs ('diff') onto `base`; the others keep `base`'s value or, without a base, the default.
 */
function buildRow(
  store: TableStore,
  uuid: string,
  base: Row | undefined,
  values: Record<string, unknown>,
  mode: 'replace' | 'diff',
  pool: ValuePool,
): Row {
  const row: Record<string, Value> = { _uuid: uuid };
  for (const column of store.columns) {
    const json = values[column.name];
    const current = base === undefined ? defaultValue(column) : base[column.name];
    if (json === undefined) {
      row[column.name] = current;
    } else if (mode === 'diff') {
      row[column.name] = applyDatumDiff(current, json, column, pool, store.shared.has(column.name));
    } else {
      row[column.name] = decodeDatum(json, column, pool, store.shared.has(column.name));
    }
  }
  return Object.freeze(row) as Row;
}

function rowsEqual(columns: readonly ColumnSchema[], a: Row, b: Row): boolean {
  return columns.every((column) => valuesEqual(a[column.name], b[column.name]));
}

function expectObject(json: unknown): Record<string, unknown> {
  if (!isJsonObject(json)) {
    throw new OvsdbProtocolError('A row update is not a JSON object; the server does not speak RFC 7047.');
  }
  return json;
}
