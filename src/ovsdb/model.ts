import type { CacheSelection, TableCache } from './cache';
import type { Row } from './row';
import { columnTypeText, type DatabaseSchema } from './schema';
import type { TableView } from './table-store';

/**
 * What a model generated from a database's schema records of it at run time: the type of every
 * column of every table (columnTypeText), so a server's schema can be checked against the model
 * before its rows are read through the model's row types.
 */
export interface DatabaseModel {
  readonly database: string;
  readonly version: string;
  readonly columns: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

type ColumnOf<R> = Exclude<keyof R, '_uuid'> & string;

/** The columns of one table a reader uses: those it looks rows up by (indexes), and those whose values repeat across rows (shared). */
export interface TableReads<R> {
  readonly columns: readonly ColumnOf<R>[];
  readonly indexes?: readonly ColumnOf<R>[];
  readonly shared?: readonly ColumnOf<R>[];
}

/** What one reader (an index) reads of a database whose rows are `Tables`, a generated model's table map. */
export type Reads<Tables> = { readonly [T in keyof Tables]?: TableReads<Tables[T]> };

type TableOf<Tables, R> = keyof R & keyof Tables & string;

/** A row as a reader sees it: the model's row of table `T`, narrowed to the columns `R` declares. */
export type ReadRow<Tables, R extends Reads<Tables>, T extends TableOf<Tables, R>> = { readonly _uuid: string } & Pick<
  Tables[T],
  Extract<NonNullable<R[T]>['columns'][number], keyof Tables[T]>
>;

/** A change of a row of a table `R` reads, as TableCache's 'change' event reports it: a union the table name narrows. */
export type RowChange<Tables, R extends Reads<Tables>> = {
  [T in TableOf<Tables, R>]: [table: T, uuid: string, oldRow: ReadRow<Tables, R, T> | undefined, newRow: ReadRow<Tables, R, T> | undefined];
}[TableOf<Tables, R>];

/** The union of what readers read: the selection of a cache they share. */
export function unionSelection(...selections: readonly CacheSelection[]): CacheSelection {
  const union = new Map<string, { columns: Set<string>; indexes: Set<string>; shared: Set<string> }>();
  for (const selection of selections) {
    for (const [table, { columns, indexes = [], shared = [] }] of Object.entries(selection)) {
      let entry = union.get(table);
      if (entry === undefined) union.set(table, (entry = { columns: new Set(), indexes: new Set(), shared: new Set() }));
      for (const column of columns) entry.columns.add(column);
      for (const column of indexes) entry.indexes.add(column);
      for (const column of shared) entry.shared.add(column);
    }
  }
  return Object.fromEntries(
    [...union].map(([table, { columns, indexes, shared }]) => [
      table,
      { columns: [...columns], indexes: [...indexes], shared: [...shared] },
    ]),
  );
}

/** What `needed` asks for that `selection` lacks (tables, columns, indexes, shared columns), or undefined when it has it all. */
export function selectionShortfall(selection: CacheSelection, needed: CacheSelection): CacheSelection | undefined {
  const shortfall: Record<string, { columns: string[]; indexes: string[]; shared: string[] }> = {};
  let short = false;
  for (const [table, { columns, indexes = [], shared = [] }] of Object.entries(needed)) {
    const have = selection[table];
    const lacking = {
      columns: columns.filter((column) => have?.columns.includes(column) !== true),
      indexes: indexes.filter((column) => have?.indexes?.includes(column) !== true),
      shared: shared.filter((column) => have?.shared?.includes(column) !== true),
    };
    if (have === undefined || lacking.columns.length + lacking.indexes.length + lacking.shared.length > 0) {
      shortfall[table] = lacking;
      short = true;
    }
  }
  return short ? shortfall : undefined;
}

/**
 * Where `schema` disagrees with `model` about what `selection` reads: tables and columns it lacks
 * ("T", "T.c"), and columns it types otherwise ("T.c is set of integer, not integer"). Empty when
 * rows of that schema can be read through the model's row types.
 */
export function modelMismatches(schema: DatabaseSchema, model: DatabaseModel, selection: CacheSelection): string[] {
  const found: string[] = [];
  for (const [table, { columns }] of Object.entries(selection)) {
    const served = schema.tables.get(table);
    if (served === undefined) {
      found.push(table);
      continue;
    }
    for (const column of columns) {
      const servedColumn = served.columns.get(column);
      const expected = model.columns[table]?.[column];
      if (servedColumn === undefined) {
        found.push(`${table}.${column}`);
      } else if (expected !== undefined && columnTypeText(servedColumn) !== expected) {
        found.push(`${table}.${column} is ${columnTypeText(servedColumn)}, not ${expected}`);
      }
    }
  }
  return found;
}

/**
 * A TableCache read through a generated model: table() is typed by the model's row, narrowed to
 * the columns `reads` declares, so a reader cannot use a column it did not ask to be mirrored.
 */
export class ModelView<Tables, R extends Reads<Tables>> {
  constructor(
    readonly cache: TableCache,
    readonly reads: R,
  ) {}

  table<T extends TableOf<Tables, R>>(name: T): TableView<ReadRow<Tables, R, T>> {
    return this.cache.table(name) as unknown as TableView<ReadRow<Tables, R, T>>;
  }

  /**
   * Calls `onChange` with every change of a table `reads` names, and `onBatch` after each applied
   * message (the cache's 'batch'); returns what stops both.
   */
  follow(onChange: (...change: RowChange<Tables, R>) => void, onBatch?: () => void): () => void {
    const tables = new Set<string>(Object.keys(this.reads));
    const changed = (table: string, uuid: string, oldRow: Row | undefined, newRow: Row | undefined): void => {
      if (tables.has(table)) (onChange as (...args: unknown[]) => void)(table, uuid, oldRow, newRow);
    };
    this.cache.on('change', changed);
    if (onBatch !== undefined) this.cache.on('batch', onBatch);
    return () => {
      this.cache.off('change', changed);
      if (onBatch !== undefined) this.cache.off('batch', onBatch);
    };
  }
}
