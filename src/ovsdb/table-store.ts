import { OvsdbSchemaError } from '../errors';
import { defaultValue, indexKeys, valuesEqual } from './datum';
import type { Row } from './row';
import type { Atom, ColumnSchema, TableSchema } from './schema';

/** Read access to one cached table. */
export interface TableView<R extends { readonly _uuid: string } = Row> extends Iterable<R> {
  readonly name: string;
  readonly size: number;
  get(uuid: string): R | undefined;
  values(): IterableIterator<R>;
  /**
   * Rows whose indexed `column` holds `value` (for set columns: contains it; for map columns: has
   * it as a key). The column must be listed in the selection's `indexes`.
   */
  lookup(column: string, value: Atom): readonly R[];
}

/** Where an index files the rows of one key once there are more than SMALL_BUCKET_ROWS. */
class IndexBucket<R> {
  readonly rows = new Map<string, R>();
  /** Built on the first lookup after a change, so lookups do not allocate on every call. */
  snapshot: readonly R[] | undefined;
}

/**
 * Most keys (a Sample's metadata, a sample_new uuid) index one row, so small sets of rows are kept
 * as frozen arrays, replaced on change: a Map per key would cost ~200 bytes per row.
 */
const SMALL_BUCKET_ROWS = 8;

type IndexEntry<R> = readonly R[] | IndexBucket<R>;

/** The answer for a key with no rows, shared so an empty lookup allocates nothing. */
export const NO_ROWS: readonly never[] = Object.freeze([]);

/** One table's rows keyed by uuid, plus secondary indexes kept in step with every change. */
export class TableStore<R extends Row = Row> implements TableView<R> {
  readonly name: string;
  private selected: readonly ColumnSchema[];
  /** Columns whose values repeat across rows: decoded through the cache's value pool. */
  private readonly sharedColumns = new Set<string>();
  private readonly rows = new Map<string, R>();
  private readonly indexes = new Map<string, Map<Atom, IndexEntry<R>>>();

  constructor(
    schema: TableSchema,
    columns: readonly ColumnSchema[],
    indexedColumns: readonly string[],
    sharedColumns: readonly string[] = [],
  ) {
    this.name = schema.name;
    this.selected = columns;
    this.widen([], indexedColumns, sharedColumns);
  }

  get columns(): readonly ColumnSchema[] {
    return this.selected;
  }

  get shared(): ReadonlySet<string> {
    return this.sharedColumns;
  }

  /**
   * Selects more columns, indexes and shared columns. Rows already held get the new columns'
   * default values (what the next full reload replaces) and are filed in the new indexes, so every
   * row keeps every selected column.
   */
  widen(columns: readonly ColumnSchema[], indexedColumns: readonly string[], sharedColumns: readonly string[]): void {
    const added = columns.filter((column) => !this.selected.some((selected) => selected.name === column.name));
    const selected = [...this.selected, ...added];
    for (const [column, what] of [
      ...indexedColumns.map((name) => [name, 'index'] as const),
      ...sharedColumns.map((name) => [name, 'share'] as const),
    ]) {
      if (!selected.some((candidate) => candidate.name === column)) {
        throw new OvsdbSchemaError(`Cannot ${what} ${this.name}.${column}: it is not among the selected columns; add it to "columns".`);
      }
    }
    this.selected = selected;
    if (added.length > 0) {
      for (const [uuid, row] of this.rows) {
        const widened: Record<string, unknown> = { ...row };
        for (const column of added) widened[column.name] = defaultValue(column);
        this.rows.set(uuid, Object.freeze(widened) as R);
      }
      // Indexes hand out row objects: file the widened ones.
      for (const column of [...this.indexes.keys()]) this.buildIndex(column);
    }
    for (const column of indexedColumns) {
      if (!this.indexes.has(column)) this.buildIndex(column);
    }
    for (const column of sharedColumns) this.sharedColumns.add(column);
  }

  get size(): number {
    return this.rows.size;
  }

  get(uuid: string): R | undefined {
    return this.rows.get(uuid);
  }

  values(): IterableIterator<R> {
    return this.rows.values();
  }

  [Symbol.iterator](): IterableIterator<R> {
    return this.rows.values();
  }

  lookup(column: string, value: Atom): readonly R[] {
    const index = this.indexes.get(column);
    if (index === undefined) {
      throw new OvsdbSchemaError(`Table "${this.name}" has no index on "${column}": list it in the selection's "indexes" for this table.`);
    }
    const entry = index.get(value);
    if (entry === undefined) {
      return NO_ROWS;
    }
    if (entry instanceof IndexBucket) {
      entry.snapshot ??= Object.freeze([...entry.rows.values()]);
      return entry.snapshot;
    }
    return entry;
  }

  /** The columns rows are looked up by. */
  indexedColumns(): string[] {
    return [...this.indexes.keys()];
  }

  /** Stores `row` under its uuid and returns the row it replaced. */
  put(row: R): R | undefined {
    const old = this.rows.get(row._uuid);
    this.rows.set(row._uuid, row);
    this.reindex(row._uuid, old, row);
    return old;
  }

  /** Removes the row and returns it. */
  remove(uuid: string): R | undefined {
    const old = this.rows.get(uuid);
    if (old !== undefined) {
      this.rows.delete(uuid);
      this.reindex(uuid, old, undefined);
    }
    return old;
  }

  uuids(): string[] {
    return [...this.rows.keys()];
  }

  private buildIndex(column: string): void {
    const index = new Map<Atom, IndexEntry<R>>();
    this.indexes.set(column, index);
    for (const [uuid, row] of this.rows) {
      for (const key of indexKeys(row[column])) {
        this.file(index, key, uuid, row);
      }
    }
  }

  private reindex(uuid: string, old: R | undefined, next: R | undefined): void {
    for (const [column, index] of this.indexes) {
      const oldValue = old?.[column];
      const nextValue = next?.[column];
      if (old !== undefined && next !== undefined && valuesEqual(oldValue, nextValue)) {
        // Same keys, but the bucket must hand out the new row object.
        for (const key of indexKeys(nextValue)) {
          this.file(index, key, uuid, next);
        }
        continue;
      }
      if (old !== undefined) {
        for (const key of indexKeys(oldValue)) {
          this.unfile(index, key, uuid);
        }
      }
      if (next !== undefined) {
        for (const key of indexKeys(nextValue)) {
          this.file(index, key, uuid, next);
        }
      }
    }
  }

  private file(index: Map<Atom, IndexEntry<R>>, key: Atom, uuid: string, row: R): void {
    const entry = index.get(key);
    if (entry === undefined) {
      index.set(key, Object.freeze([row]));
    } else if (entry instanceof IndexBucket) {
      entry.rows.set(uuid, row);
      entry.snapshot = undefined;
    } else {
      const position = entry.findIndex((filed) => filed._uuid === uuid);
      if (position >= 0) {
        index.set(key, Object.freeze(entry.with(position, row)));
      } else if (entry.length < SMALL_BUCKET_ROWS) {
        index.set(key, Object.freeze([...entry, row]));
      } else {
        const bucket = new IndexBucket<R>();
        for (const filed of entry) {
          bucket.rows.set(filed._uuid, filed);
        }
        bucket.rows.set(uuid, row);
        index.set(key, bucket);
      }
    }
  }

  private unfile(index: Map<Atom, IndexEntry<R>>, key: Atom, uuid: string): void {
    const entry = index.get(key);
    if (entry === undefined) {
      return;
    }
    if (entry instanceof IndexBucket) {
      entry.rows.delete(uuid);
      entry.snapshot = undefined;
      if (entry.rows.size === 0) {
        index.delete(key);
      }
      return;
    }
    const remaining = entry.filter((filed) => filed._uuid !== uuid);
    if (remaining.length === 0) {
      index.delete(key);
    } else {
      index.set(key, Object.freeze(remaining));
    }
  }
}
