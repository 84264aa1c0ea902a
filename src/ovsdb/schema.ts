import { readFile } from 'node:fs/promises';
import { OvsdbSchemaError } from '../errors';
import { isJsonObject } from './json-object';

export type AtomicType = 'integer' | 'real' | 'boolean' | 'string' | 'uuid';

/** A decoded atom: uuids (and named-uuids) are their string form. */
export type Atom = string | number | boolean;

export interface BaseType {
  readonly type: AtomicType;
  readonly enum?: readonly Atom[];
  readonly minInteger?: number;
  readonly maxInteger?: number;
  readonly minReal?: number;
  readonly maxReal?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly refTable?: string;
  readonly refType?: 'strong' | 'weak';
}

export interface ColumnType {
  readonly key: BaseType;
  readonly value?: BaseType;
  readonly min: 0 | 1;
  readonly max: number | 'unlimited';
}

/**
 * How a column's values look in a cached row: 'atom' (min 1, max 1), 'optional' (min 0, max 1:
 * the atom or undefined), 'set' (readonly array) or 'map' (ReadonlyMap).
 */
export type ColumnKind = 'atom' | 'optional' | 'set' | 'map';

export interface ColumnSchema {
  readonly name: string;
  readonly type: ColumnType;
  readonly kind: ColumnKind;
  readonly ephemeral: boolean;
  readonly mutable: boolean;
}

export interface TableSchema {
  readonly name: string;
  readonly columns: ReadonlyMap<string, ColumnSchema>;
  readonly isRoot: boolean;
  readonly maxRows?: number;
  readonly indexes: readonly (readonly string[])[];
}

export interface DatabaseSchema {
  readonly name: string;
  readonly version: string;
  readonly cksum?: string;
  readonly tables: ReadonlyMap<string, TableSchema>;
}

const ATOMIC_TYPES: ReadonlySet<string> = new Set(['integer', 'real', 'boolean', 'string', 'uuid']);

/** Parses an RFC 7047 <database-schema> (the content of an .ovsschema file or a get_schema reply). */
export function parseSchema(json: unknown): DatabaseSchema {
  const root = expectObject(json, 'the schema');
  const name = expectString(root.name, 'schema "name"');
  const version = root.version === undefined ? '' : expectString(root.version, 'schema "version"');
  const tablesJson = expectObject(root.tables, 'schema "tables"');
  const tables = new Map<string, TableSchema>();
  for (const [tableName, tableJson] of Object.entries(tablesJson)) {
    tables.set(expectId(tableName, `table name "${tableName}"`), parseTable(tableName, tableJson));
  }
  for (const table of tables.values()) {
    for (const column of table.columns.values()) {
      for (const base of [column.type.key, column.type.value]) {
        if (base?.refTable !== undefined && !tables.has(base.refTable)) {
          throw new OvsdbSchemaError(
            `Column ${table.name}.${column.name} refers to table "${base.refTable}", which schema "${name}" does not define; use the schema file the server serves.`,
          );
        }
      }
    }
  }
  const schema: DatabaseSchema = { name, version, tables };
  return typeof root.cksum === 'string' ? { ...schema, cksum: root.cksum } : schema;
}

/** Reads and parses an .ovsschema file (for example /usr/share/ovn/ovn-nb.ovsschema). */
export async function loadSchemaFile(path: string): Promise<DatabaseSchema> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new OvsdbSchemaError(`Cannot read the OVSDB schema file ${path}: check the path and its permissions.`, {
      cause: error,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new OvsdbSchemaError(`The OVSDB schema file ${path} is not valid JSON: pass an .ovsschema file.`, {
      cause: error,
    });
  }
  return parseSchema(json);
}

/**
 * A column's type as it shapes cached values: "integer", "optional string", "set of uuid", "map of
 * string to string" (constraints such as enums, bounds and references left out). Generated models
 * record it per column, so a server whose schema types a column otherwise is told apart.
 */
export function columnTypeText(column: ColumnSchema): string {
  const { key, value } = column.type;
  switch (column.kind) {
    case 'atom':
      return key.type;
    case 'optional':
      return `optional ${key.type}`;
    case 'set':
      return `set of ${key.type}`;
    case 'map':
      return `map of ${key.type} to ${value!.type}`;
  }
}

/** The table's schema, or a typed error naming what is missing. */
export function requireTable(schema: DatabaseSchema, table: string): TableSchema {
  const found = schema.tables.get(table);
  if (found === undefined) {
    throw new OvsdbSchemaError(
      `Database "${schema.name}" (schema ${schema.version}) has no table "${table}": check the table name or upgrade the database.`,
    );
  }
  return found;
}

/** The column's schema, or a typed error naming what is missing. */
export function requireColumn(table: TableSchema, column: string): ColumnSchema {
  const found = table.columns.get(column);
  if (found === undefined) {
    throw new OvsdbSchemaError(`Table "${table.name}" has no column "${column}": check the column name or upgrade the database.`);
  }
  return found;
}

function parseTable(name: string, json: unknown): TableSchema {
  const where = `table "${name}"`;
  const table = expectObject(json, where);
  const columnsJson = expectObject(table.columns, `${where} "columns"`);
  const columns = new Map<string, ColumnSchema>();
  for (const [columnName, columnJson] of Object.entries(columnsJson)) {
    columns.set(expectId(columnName, `column name "${name}.${columnName}"`), parseColumn(`${name}.${columnName}`, columnName, columnJson));
  }
  const indexes = table.indexes === undefined ? [] : parseIndexes(where, table.indexes, columns);
  const parsed: TableSchema = {
    name,
    columns,
    isRoot: table.isRoot === undefined ? false : expectBoolean(table.isRoot, `${where} "isRoot"`),
    indexes,
  };
  return table.maxRows === undefined ? parsed : { ...parsed, maxRows: expectInteger(table.maxRows, `${where} "maxRows"`) };
}

function parseIndexes(where: string, json: unknown, columns: ReadonlyMap<string, ColumnSchema>): string[][] {
  if (!Array.isArray(json)) {
    throw invalid(`${where} "indexes"`, 'an array of column-name arrays');
  }
  return json.map((index) => {
    if (!Array.isArray(index) || index.some((column) => typeof column !== 'string' || !columns.has(column))) {
      throw invalid(`${where} "indexes"`, 'arrays of its own column names');
    }
    return index.map((column) => expectString(column, `${where} index column`));
  });
}

function parseColumn(where: string, name: string, json: unknown): ColumnSchema {
  const column = expectObject(json, `column ${where}`);
  const type = parseColumnType(where, column.type);
  return {
    name,
    type,
    kind: columnKind(type),
    ephemeral: column.ephemeral === undefined ? false : expectBoolean(column.ephemeral, `${where} "ephemeral"`),
    mutable: column.mutable === undefined ? true : expectBoolean(column.mutable, `${where} "mutable"`),
  };
}

function parseColumnType(where: string, json: unknown): ColumnType {
  if (typeof json === 'string') {
    return { key: parseBaseType(where, json), min: 1, max: 1 };
  }
  const type = expectObject(json, `${where} "type"`);
  const key = parseBaseType(`${where} key`, type.key);
  const min = type.min === undefined ? 1 : expectInteger(type.min, `${where} "min"`);
  if (min !== 0 && min !== 1) {
    throw invalid(`${where} "min"`, '0 or 1');
  }
  let max: number | 'unlimited' = 1;
  if (type.max === 'unlimited') {
    max = 'unlimited';
  } else if (type.max !== undefined) {
    max = expectInteger(type.max, `${where} "max"`);
    if (max < 1 || max < min) {
      throw invalid(`${where} "max"`, 'a positive integer not below "min", or "unlimited"');
    }
  }
  const parsed: ColumnType = { key, min, max };
  return type.value === undefined ? parsed : { ...parsed, value: parseBaseType(`${where} value`, type.value) };
}

function parseBaseType(where: string, json: unknown): BaseType {
  if (typeof json === 'string') {
    return { type: expectAtomicType(json, where) };
  }
  const base = expectObject(json, where);
  const type = expectAtomicType(base.type, `${where} "type"`);
  const parsed: { -readonly [K in keyof BaseType]: BaseType[K] } = { type };
  if (base.enum !== undefined) {
    parsed.enum = parseEnum(where, base.enum);
  }
  for (const bound of ['minInteger', 'maxInteger', 'minLength', 'maxLength'] as const) {
    if (base[bound] !== undefined) {
      parsed[bound] = expectInteger(base[bound], `${where} "${bound}"`);
    }
  }
  for (const bound of ['minReal', 'maxReal'] as const) {
    if (base[bound] !== undefined) {
      parsed[bound] = expectNumber(base[bound], `${where} "${bound}"`);
    }
  }
  if (base.refTable !== undefined) {
    if (type !== 'uuid') {
      throw invalid(`${where} "refTable"`, 'present only on uuid types');
    }
    parsed.refTable = expectString(base.refTable, `${where} "refTable"`);
    parsed.refType = 'strong';
  }
  if (base.refType !== undefined) {
    if (base.refType !== 'strong' && base.refType !== 'weak') {
      throw invalid(`${where} "refType"`, '"strong" or "weak"');
    }
    parsed.refType = base.refType;
  }
  return parsed;
}

/** An enum is one atom or ["set", [atoms]]; uuid atoms are ["uuid", "..."]. */
function parseEnum(where: string, json: unknown): Atom[] {
  const elements = Array.isArray(json) && json[0] === 'set' && Array.isArray(json[1]) ? (json[1] as unknown[]) : [json];
  return elements.map((element) => {
    if (typeof element === 'string' || typeof element === 'number' || typeof element === 'boolean') {
      return element;
    }
    if (Array.isArray(element) && element[0] === 'uuid' && typeof element[1] === 'string') {
      return element[1];
    }
    throw invalid(`${where} "enum"`, 'atoms or ["set", [atoms]]');
  });
}

function columnKind(type: ColumnType): ColumnKind {
  if (type.value !== undefined) {
    return 'map';
  }
  if (type.max === 1) {
    return type.min === 1 ? 'atom' : 'optional';
  }
  return 'set';
}

function expectObject(json: unknown, where: string): Record<string, unknown> {
  if (!isJsonObject(json)) {
    throw invalid(where, 'a JSON object');
  }
  return json;
}

function expectString(json: unknown, where: string): string {
  if (typeof json !== 'string') {
    throw invalid(where, 'a string');
  }
  return json;
}

function expectBoolean(json: unknown, where: string): boolean {
  if (typeof json !== 'boolean') {
    throw invalid(where, 'true or false');
  }
  return json;
}

function expectNumber(json: unknown, where: string): number {
  if (typeof json !== 'number' || !Number.isFinite(json)) {
    throw invalid(where, 'a number');
  }
  return json;
}

function expectInteger(json: unknown, where: string): number {
  if (!Number.isInteger(json)) {
    throw invalid(where, 'an integer');
  }
  return json as number;
}

function expectAtomicType(json: unknown, where: string): AtomicType {
  if (typeof json !== 'string' || !ATOMIC_TYPES.has(json)) {
    throw invalid(where, 'one of integer, real, boolean, string, uuid');
  }
  return json as AtomicType;
}

function invalid(where: string, expected: string): OvsdbSchemaError {
  return new OvsdbSchemaError(
    `Invalid OVSDB schema: ${where} must be ${expected} (RFC 7047 section 3.2); pass the .ovsschema file or get_schema reply unmodified.`,
  );
}

/** RFC 7047 <id>: table and column names become property names of cached rows, so nothing else gets in. */
const ID = /^[A-Za-z_][A-Za-z0-9_]*$/;

function expectId(name: string, what: string): string {
  if (!ID.test(name) || name === '__proto__') {
    throw new OvsdbSchemaError(
      `The schema's ${what} is not an RFC 7047 <id> (letters, digits and "_", not starting with a digit): the server does not follow RFC 7047.`,
    );
  }
  return name;
}
