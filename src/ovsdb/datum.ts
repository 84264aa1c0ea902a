import { OvsdbProtocolError } from '../errors';
import type { Atom, BaseType, ColumnSchema } from './schema';
import type { Value } from './row';
import type { ValuePool } from './value-pool';

/** Map values this short are likely shared by many rows ("NetworkPolicy"), so they are interned. */
const SHARED_VALUE_MAX_LENGTH = 32;

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';
const EMPTY_SET: readonly Atom[] = Object.freeze([]);
// Rows are immutable by contract, so every empty map column can share one instance.
const EMPTY_MAP: ReadonlyMap<Atom, Atom> = new Map();

/** The value ovsdb-server omits from update2 "initial"/"insert" rows because it is the default. */
export function defaultValue(column: ColumnSchema): Value {
  switch (column.kind) {
    case 'atom':
      return defaultAtom(column.type.key);
    case 'optional':
      return undefined;
    case 'set':
      return EMPTY_SET;
    case 'map':
      return EMPTY_MAP;
  }
}

/**
 * Decodes an RFC 7047 <value> (atom, ["set", ...], ["map", ...]) into the column's cached form.
 * A `shared` column's values repeat across rows: its strings and maps come from the pool.
 */
export function decodeDatum(json: unknown, column: ColumnSchema, pool: ValuePool, shared = false): Value {
  switch (column.kind) {
    case 'atom': {
      const elements = setElements(json, column, pool, shared);
      if (elements.length !== 1) {
        throw malformed(column, 'exactly one atom');
      }
      return elements[0];
    }
    case 'optional': {
      const elements = setElements(json, column, pool, shared);
      if (elements.length > 1) {
        throw malformed(column, 'at most one atom');
      }
      return elements[0];
    }
    case 'set': {
      const elements = setElements(json, column, pool, shared);
      return elements.length === 0 ? EMPTY_SET : Object.freeze(elements);
    }
    case 'map': {
      const pairs = mapPairs(json, column, pool);
      return pairs.size === 0 ? EMPTY_MAP : shared ? pool.shareMap(pairs) : pairs;
    }
  }
}

/**
 * Applies an update2 "modify" diff (RFC 7047 extension as ovsdb-server implements it): columns
 * of at most one element (atom, optional) carry their new value; set elements in the diff are
 * toggled; a map key absent before is added, a key with the same value is removed, a key with
 * another value is replaced.
 */
export function applyDatumDiff(current: Value, diff: unknown, column: ColumnSchema, pool: ValuePool, shared = false): Value {
  switch (column.kind) {
    case 'atom':
    case 'optional':
      return decodeDatum(diff, column, pool, shared);
    case 'set': {
      const toggled = toggle(current as readonly Atom[], setElements(diff, column, pool, shared));
      return toggled.length === 0 ? EMPTY_SET : Object.freeze(toggled);
    }
    case 'map': {
      const next = new Map(current as ReadonlyMap<Atom, Atom>);
      for (const [key, value] of mapPairs(diff, column, pool)) {
        if (!next.has(key)) {
          next.set(key, value);
        } else if (next.get(key) === value) {
          next.delete(key);
        } else {
          next.set(key, value);
        }
      }
      return next.size === 0 ? EMPTY_MAP : shared ? pool.shareMap(next) : next;
    }
  }
}

/** Structural equality of two cached values of the same column. */
export function valuesEqual(a: Value, b: Value): boolean {
  if (a === b) {
    return true;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) {
      return false;
    }
    const elements = new Set<Atom>(a as readonly Atom[]);
    return (b as readonly Atom[]).every((element) => elements.has(element));
  }
  if (a instanceof Map && b instanceof Map) {
    if (a.size !== b.size) {
      return false;
    }
    for (const [key, value] of a) {
      if (b.get(key) !== value || !b.has(key)) {
        return false;
      }
    }
    return true;
  }
  return false;
}

/** Array.isArray types a readonly Atom[] as any[]. */
const isAtomList = (value: Value): value is readonly Atom[] => Array.isArray(value);

/** The atoms a column value holds: what a secondary index files the row under. */
export function indexKeys(value: Value): readonly Atom[] {
  if (value === undefined) {
    return EMPTY_SET;
  }
  if (isAtomList(value)) {
    return value;
  }
  if (typeof value === 'object') {
    return [...value.keys()];
  }
  return [value];
}

function toggle(current: readonly Atom[], diff: readonly Atom[]): Atom[] {
  const elements = new Set<Atom>(current);
  for (const element of diff) {
    if (!elements.delete(element)) {
      elements.add(element);
    }
  }
  return [...elements];
}

function setElements(json: unknown, column: ColumnSchema, pool: ValuePool, shared: boolean): Atom[] {
  const share = shared || column.type.key.enum !== undefined;
  if (Array.isArray(json) && json[0] === 'set') {
    const elements: unknown = json[1];
    if (!Array.isArray(elements)) {
      throw malformed(column, '["set", [atoms]]');
    }
    const atoms = new Array<Atom>(elements.length);
    for (let i = 0; i < elements.length; i++) {
      atoms[i] = decodeAtom(elements[i], column.type.key, column, pool, share);
    }
    return atoms;
  }
  return [decodeAtom(json, column.type.key, column, pool, share)];
}

function mapPairs(json: unknown, column: ColumnSchema, pool: ValuePool): Map<Atom, Atom> {
  const valueType = column.type.value;
  if (!Array.isArray(json) || json[0] !== 'map' || !Array.isArray(json[1]) || valueType === undefined) {
    throw malformed(column, '["map", [[key, value], ...]]');
  }
  const pairs = new Map<Atom, Atom>();
  for (const pair of json[1] as unknown[]) {
    if (!Array.isArray(pair) || pair.length !== 2) {
      throw malformed(column, '["map", [[key, value], ...]]');
    }
    const value = decodeAtom(pair[1], valueType, column, pool, false);
    pairs.set(
      decodeAtom(pair[0], column.type.key, column, pool, true),
      typeof value === 'string' && value.length <= SHARED_VALUE_MAX_LENGTH ? pool.intern(value) : value,
    );
  }
  return pairs;
}

function decodeAtom(json: unknown, base: BaseType, column: ColumnSchema, pool: ValuePool, shared: boolean): Atom {
  switch (base.type) {
    case 'string':
      if (typeof json === 'string') {
        return shared ? pool.intern(json) : json;
      }
      break;
    case 'integer':
    case 'real':
      if (typeof json === 'number') {
        return json;
      }
      break;
    case 'boolean':
      if (typeof json === 'boolean') {
        return json;
      }
      break;
    case 'uuid':
      if (Array.isArray(json) && (json[0] === 'uuid' || json[0] === 'named-uuid') && typeof json[1] === 'string') {
        return shared ? pool.intern(json[1]) : json[1];
      }
      break;
  }
  throw malformed(column, `${base.type} atoms`);
}

function defaultAtom(base: BaseType): Atom {
  switch (base.type) {
    case 'integer':
    case 'real':
      return 0;
    case 'boolean':
      return false;
    case 'string':
      return '';
    case 'uuid':
      return ZERO_UUID;
  }
}

function malformed(column: ColumnSchema, expected: string): OvsdbProtocolError {
  return new OvsdbProtocolError(
    `Column "${column.name}" received a value that is not ${expected}: the server and the schema disagree; reconnect with the server's own schema.`,
  );
}
