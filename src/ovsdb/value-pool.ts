import type { Atom } from './schema';

/** A shared map is keyed by its text; larger maps are rarely equal and would cost more to key than to keep. */
const MAX_SHARED_MAP_CHARS = 512;

/**
 * Shares one copy of values that repeat across many rows: strings (enum values such as
 * "allow-related", map keys such as "k8s.ovn.org/name", uuids of a few referenced rows) and
 * small maps (a logical flow's {stage-name, source}): a parsed message holds a separate copy of
 * each, which for 100,000 rows costs tens of MB. Rows are immutable, so sharing is safe. Bounded,
 * so unique values cannot make it grow forever.
 */
export class ValuePool {
  private readonly strings = new Map<string, string>();
  private readonly maps = new Map<string, ReadonlyMap<Atom, Atom>>();

  constructor(private readonly capacity = 65_536) {}

  intern(text: string): string {
    return this.share(this.strings, text, text);
  }

  /** An equal map seen before (same pairs, same order), or `map`, remembered. */
  shareMap(map: ReadonlyMap<Atom, Atom>): ReadonlyMap<Atom, Atom> {
    let key = '';
    for (const [name, value] of map) {
      key += `${typeof name === 'string' ? 's' : 'o'}${String(name)}\u0000${typeof value === 'string' ? 's' : 'o'}${String(value)}\u0000`;
      if (key.length > MAX_SHARED_MAP_CHARS) {
        return map;
      }
    }
    return this.share(this.maps, key, map);
  }

  private share<V>(known: Map<string, V>, key: string, value: V): V {
    const shared = known.get(key);
    if (shared !== undefined) {
      return shared;
    }
    if (known.size < this.capacity) {
      known.set(key, value);
    }
    return value;
  }
}
