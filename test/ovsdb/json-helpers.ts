import { LazyJsonObject, objectMembers } from '../../src/ovsdb/lazy-json';

/** Turns lazy objects back into plain ones, to compare with JSON.parse. */
export function materialize(value: unknown): unknown {
  if (value instanceof LazyJsonObject) {
    return Object.fromEntries([...objectMembers(value)].map(([key, read]) => [key, materialize(read())]));
  }
  if (Array.isArray(value)) {
    return value.map(materialize);
  }
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, materialize(member)]));
  }
  return value;
}
