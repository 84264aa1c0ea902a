/**
 * A multimap from a key to uuids, storing a lone uuid as a plain string: nearly every key has
 * one uuid, and a container per key would cost more memory than the cached rows themselves.
 */
export class UuidBuckets<K> {
  private readonly buckets = new Map<K, string | string[]>();

  add(key: K, uuid: string): void {
    const bucket = this.buckets.get(key);
    if (bucket === undefined) {
      this.buckets.set(key, uuid);
    } else if (typeof bucket === 'string') {
      if (bucket !== uuid) {
        this.buckets.set(key, [bucket, uuid]);
      }
    } else if (!bucket.includes(uuid)) {
      bucket.push(uuid);
    }
  }

  remove(key: K, uuid: string): void {
    const bucket = this.buckets.get(key);
    if (bucket === uuid) {
      this.buckets.delete(key);
    } else if (Array.isArray(bucket)) {
      const remaining = bucket.filter((candidate) => candidate !== uuid);
      this.buckets.set(key, remaining.length === 1 ? remaining[0]! : remaining);
    }
  }

  /** The uuids filed under `key`, oldest first. */
  get(key: K): readonly string[] {
    const bucket = this.buckets.get(key);
    return bucket === undefined ? [] : typeof bucket === 'string' ? [bucket] : bucket;
  }
}
