import { OvsdbClosedError } from '../errors';
import { TableCache, type CacheSelection } from './cache';
import type { OvsdbClient } from './client';
import { selectionShortfall, unionSelection } from './model';
import type { DatabaseSchema } from './schema';

/** One reader's place in a shared mirror. */
export interface MirrorMembership {
  /**
   * The mirror's cache, once it selects what this reader reads (its rows may still be arriving):
   * attach indexes here. Rejects when the reader's schema check or the schema read fails.
   */
  readonly cache: Promise<TableCache>;
  /** Resolves once the cache holds the database's content for what this reader reads. */
  readonly synced: Promise<void>;
  /** Leaves the mirror; the last reader to leave stops its monitor. Idempotent. */
  leave(): Promise<void>;
}

/** Checks that the server's schema serves what a reader reads; throws (a typed error) when it does not. */
export type SchemaCheck = (schema: DatabaseSchema) => void;

interface Member {
  readonly selection: CacheSelection;
  readonly check: SchemaCheck | undefined;
  readonly cache: Deferred<TableCache>;
  readonly synced: Deferred<void>;
}

const mirrors = new WeakMap<OvsdbClient, Map<string, SharedMirror>>();

/**
 * One TableCache per database per client, shared by every reader that joins it (the decoder's
 * indexes, the pod directory): it selects the union of what they read and is monitored once.
 * Readers that join in the same turn of the event loop, before the database's schema is read,
 * get one selection and one initial sync. A reader that joins later and reads more widens the
 * cache, which is then reloaded once on the live session (OvsdbClient.resync()); the readers
 * already there keep reading it meanwhile. The last reader to leave stops the monitor.
 */
export class SharedMirror {
  private cache: TableCache | undefined;
  /** The initial sync of `cache`. */
  private monitoring: Promise<void> | undefined;
  private opening = false;
  /** Joined before the selection was fixed. */
  private waiting: Member[] = [];
  private readonly members = new Set<Member>();

  private constructor(
    private readonly client: OvsdbClient,
    private readonly database: string,
  ) {}

  /**
   * Joins the mirror of `database` on `client`, made on first use, with what the reader reads.
   * `check` is run on the server's schema before the reader is let in.
   */
  static join(client: OvsdbClient, database: string, selection: CacheSelection, check?: SchemaCheck): MirrorMembership {
    let byDatabase = mirrors.get(client);
    if (byDatabase === undefined) mirrors.set(client, (byDatabase = new Map<string, SharedMirror>()));
    let mirror = byDatabase.get(database);
    if (mirror === undefined) byDatabase.set(database, (mirror = new SharedMirror(client, database)));
    return mirror.add(selection, check);
  }

  private add(selection: CacheSelection, check: SchemaCheck | undefined): MirrorMembership {
    const member: Member = { selection, check, cache: deferred(), synced: deferred() };
    this.members.add(member);
    if (this.cache === undefined) {
      this.waiting.push(member);
      if (!this.opening) {
        this.opening = true;
        void this.open();
      }
    } else {
      void this.extend(this.cache, member);
    }
    let left: Promise<void> | undefined;
    return {
      cache: member.cache.promise,
      synced: member.synced.promise,
      leave: () => (left ??= this.remove(member)),
    };
  }

  /** Reads the schema, lets in the readers waiting whose checks pass, and monitors their union. */
  private async open(): Promise<void> {
    let schema: DatabaseSchema;
    try {
      schema = await this.client.getSchema(this.database);
    } catch (error) {
      this.opening = false;
      for (const member of this.waiting.splice(0)) this.refuse(member, error);
      this.forgetIfUnused();
      return;
    }
    this.opening = false;
    const admitted = this.waiting.splice(0).filter((member) => this.admit(member, schema));
    if (admitted.length === 0) {
      this.forgetIfUnused();
      return;
    }
    let cache: TableCache;
    try {
      cache = new TableCache(schema, unionSelection(...admitted.map((member) => member.selection)));
    } catch (error) {
      for (const member of admitted) this.refuse(member, error);
      this.forgetIfUnused();
      return;
    }
    this.cache = cache;
    const monitoring = this.client.monitor(this.database, cache);
    this.monitoring = monitoring;
    monitoring.catch(() => {
      // The monitor is refused for good or the client closed: the next reader starts a new mirror.
      if (this.cache === cache) this.forget();
    });
    for (const member of admitted) {
      member.cache.resolve(cache);
      member.synced.follow(monitoring);
    }
  }

  /** A reader joining a mirror that exists: widened and reloaded when it reads more than the mirror holds. */
  private async extend(cache: TableCache, member: Member): Promise<void> {
    let schema: DatabaseSchema;
    try {
      schema = await this.client.getSchema(this.database);
    } catch (error) {
      this.refuse(member, error);
      return;
    }
    if (!this.members.has(member) || !this.admit(member, schema)) return;
    if (this.cache !== cache) {
      // The mirror was given up meanwhile (its monitor failed): join the next one.
      this.members.delete(member);
      const membership = SharedMirror.join(this.client, this.database, member.selection, member.check);
      member.cache.follow(membership.cache);
      member.synced.follow(membership.synced);
      return;
    }
    const shortfall = selectionShortfall(cache.selection(), member.selection);
    if (shortfall === undefined) {
      member.cache.resolve(cache);
      member.synced.follow(this.monitoring!);
      return;
    }
    try {
      cache.widen(shortfall);
    } catch (error) {
      this.refuse(member, error);
      return;
    }
    member.cache.resolve(cache);
    // The initial sync first, if it is still going: the reload supersedes it, and both must be done.
    member.synced.follow(Promise.all([this.monitoring!, this.client.resync(cache)]).then(() => undefined));
  }

  private admit(member: Member, schema: DatabaseSchema): boolean {
    try {
      member.check?.(schema);
      return true;
    } catch (error) {
      this.refuse(member, error);
      return false;
    }
  }

  private refuse(member: Member, error: unknown): void {
    this.members.delete(member);
    member.cache.reject(error);
    member.synced.reject(error);
  }

  private async remove(member: Member): Promise<void> {
    if (!this.members.delete(member)) return;
    const closed = new OvsdbClosedError(`The reader left the ${this.database} mirror before it was synced.`);
    member.cache.reject(closed);
    member.synced.reject(closed);
    const waitingAt = this.waiting.indexOf(member);
    if (waitingAt >= 0) this.waiting.splice(waitingAt, 1);
    if (this.members.size > 0) return;
    const cache = this.cache;
    this.forget();
    if (cache !== undefined) await this.client.unmonitor(cache);
  }

  private forgetIfUnused(): void {
    if (this.members.size === 0 && !this.opening) this.forget();
  }

  private forget(): void {
    this.cache = undefined;
    this.monitoring = undefined;
    const byDatabase = mirrors.get(this.client);
    if (byDatabase?.get(this.database) === this) byDatabase.delete(this.database);
  }
}

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
  /** Settles as `source` does. */
  follow(source: Promise<T>): void;
}

/** A promise settled from outside, whose rejection is never unhandled: a reader may leave without awaiting it. */
function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((onResolve, onReject) => {
    resolve = onResolve;
    reject = onReject;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject, follow: (source) => void source.then(resolve, reject) };
}
