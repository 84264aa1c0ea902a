import { EventEmitter } from 'node:events';
import { OvsdbClosedError } from '../errors';
import type { TableCache } from '../ovsdb/cache';
import { OvsdbClient, type OvsdbClientOptions, type OvsdbResync, type OvsdbStatus } from '../ovsdb/client';
import { emitErrorIfHeard } from '../ovsdb/optional-error';
import { SharedMirror, type MirrorMembership } from '../ovsdb/shared-mirror';
import type { PsampleMessage } from '../psample/types';
import { OVN_COOKIE_BYTES, readCookieId } from './cookie';
import { DecodeCounters, type OvnDecoderStats } from './decode-stats';
import type { OvnSampleEvent } from './event';
import type { LogicalFlowTextSource } from './flow-directory';
import { OvnSampleResolver, unresolvedEvent } from './sample-resolver';
import {
  assertSelection,
  DECODER_NORTHBOUND_READS,
  DECODER_SOUTHBOUND_READS,
  NORTHBOUND_DATABASE,
  northboundSelection,
  SOUTHBOUND_DATABASE,
  southboundSelection,
} from './selection';

export { NORTHBOUND_DATABASE, SOUTHBOUND_DATABASE } from './selection';

/** A connected client (left open on close()), or remotes in ovn-nbctl syntax to connect to. */
export type OvnDatabase = OvsdbClient | string | readonly string[];

export interface OvnSampleDecoderOptions {
  readonly nb: OvnDatabase;
  /** Needed to name datapaths (switch, network) and to decode drop samples. */
  readonly sb?: OvnDatabase;
  /** Aborts connecting and closes what the decoder opened. */
  readonly signal?: AbortSignal;
  /** For the connections the decoder opens: ssl credentials, timeouts, backoff. */
  readonly client?: Omit<OvsdbClientOptions, 'signal' | 'database'>;
}

/** For embedding and tests: caches the caller already feeds, built with northboundSelection()/southboundSelection(). */
export interface OvnSampleDecoderCaches {
  readonly nbCache: TableCache;
  readonly sbCache?: TableCache;
}

export interface OvnSampleDecoderEvents {
  /** A database connection's state, as OvsdbClient reports it. */
  status: [database: string, status: OvsdbStatus];
  /** A mirrored database is reloaded from scratch on a live connection (it diverged, or its schema was converted). */
  resync: [database: string, resync: OvsdbResync];
  /** Connection problems; the client keeps reconnecting. Emitted only while someone listens. */
  error: [error: Error];
  /**
   * A mirrored database changed (or the decoder closed): answers given before may differ now.
   * Whoever keeps an answer that holds() vouched for drops it here.
   */
  change: [];
}

/**
 * Tells which OVN ACL (and which Kubernetes policy behind it) or which logical flow produced an
 * OVS psample sample, from its 8-byte cookie. The databases are mirrored in memory and followed
 * live, so decode() is synchronous, never throws, and costs a few map lookups (OvnSampleResolver);
 * this class connects, syncs and disconnects.
 */
export class OvnSampleDecoder extends EventEmitter<OvnSampleDecoderEvents> {
  private readonly options: OvnSampleDecoderOptions | undefined;
  private readonly callerCaches: OvnSampleDecoderCaches | undefined;
  private readonly counters = new DecodeCounters();
  private readonly notOvnCookieEvents = new Map<number, OvnSampleEvent>();
  private readonly ownedClients: OvsdbClient[] = [];
  /** Undoes what was put on clients (listeners, places in their shared mirrors), on close(). */
  private readonly detachers: (() => void | Promise<void>)[] = [];
  private resolver: OvnSampleResolver | undefined;
  private synced = false;
  private resyncs = 0;
  private starting: Promise<void> | undefined;
  /** Aborted by close(), so a start() in progress stops and closes what it opens afterwards. */
  private attempt: AbortController | undefined;
  private readonly changed = (): void => {
    this.emit('change');
  };

  constructor(options: OvnSampleDecoderOptions | OvnSampleDecoderCaches) {
    super();
    if ('nbCache' in options) {
      this.options = undefined;
      this.callerCaches = options;
      assertSelection(options.nbCache, northboundSelection(options.nbCache.schema));
      if (options.sbCache !== undefined) {
        assertSelection(options.sbCache, southboundSelection(options.sbCache.schema));
      }
      this.useCallerCaches(options);
    } else {
      this.options = options;
      this.callerCaches = undefined;
    }
  }

  /**
   * Connects (when given remotes), mirrors the databases and resolves after their initial sync.
   * On failure what was opened is closed again, and start() may be retried. A close() while this
   * is in progress makes it reject with OvsdbClosedError; start() after close() starts afresh.
   */
  start(): Promise<void> {
    if (this.starting === undefined) {
      if (this.options === undefined) {
        if (this.resolver === undefined && this.callerCaches !== undefined) {
          this.useCallerCaches(this.callerCaches);
        }
        this.starting = Promise.resolve();
      } else {
        this.starting = this.startOnce(this.options);
      }
    }
    return this.starting;
  }

  decode(obsDomainId: number, obsPointId: number): OvnSampleEvent {
    const domain = obsDomainId >>> 0;
    const point = obsPointId >>> 0;
    const resolver = this.resolver;
    if (resolver === undefined || !this.synced) {
      return this.counters.count(
        unresolvedEvent(domain, point, 'not-synced', 'The OVN databases are not synced yet: await decoder.start() before decoding.'),
      );
    }
    return this.counters.count(resolver.resolve(domain, point));
  }

  /**
   * decode(), once what the decoder reads on demand is here: the match and actions of the logical
   * flow a drop sample names (the first decode() of such a sample has them not yet). For one-shot
   * answers; a stream of samples uses decode().
   */
  async decodeWithDetails(obsDomainId: number, obsPointId: number): Promise<OvnSampleEvent> {
    if (this.resolver !== undefined && this.synced) {
      await this.resolver.prepare(obsDomainId >>> 0, obsPointId >>> 0);
    }
    return this.decode(obsDomainId, obsPointId);
  }

  /** Decodes an 8-byte psample user cookie (obs_domain_id, obs_point_id; big-endian). */
  decodeCookie(cookie: Uint8Array): OvnSampleEvent {
    if (cookie.byteLength !== OVN_COOKIE_BYTES) return this.notOvnCookie(cookie.byteLength);
    return this.decode(readCookieId(cookie, 0), readCookieId(cookie, 4));
  }

  /**
   * Whether decode() answers `event` (one of its answers) for its ids, and decodeSample() for
   * every sample with its cookie, until the next 'change': false for an answer that is completed
   * later (a drop sample's flow whose match is still being read) or given before the sync.
   */
  holds(event: OvnSampleEvent): boolean {
    if (event.status === 'unknown' && event.reason === 'not-ovn-cookie') {
      for (const kept of this.notOvnCookieEvents.values()) if (kept === event) return true;
      return false;
    }
    return this.synced && this.resolver?.keeps(event) === true;
  }

  decodeSample(message: PsampleMessage): OvnSampleEvent {
    const cookie = message.userCookie;
    return cookie === undefined ? this.notOvnCookie(0) : this.decodeCookie(cookie);
  }

  /** One frozen event per cookie length: samples without an OVS cookie (tc) come by the thousand. */
  private notOvnCookie(length: number): OvnSampleEvent {
    let event = this.notOvnCookieEvents.get(length);
    if (event === undefined) {
      event = Object.freeze(
        unresolvedEvent(0, 0, 'not-ovn-cookie', `The sample's cookie has ${length} bytes, not the 8 of an OVS sample.`),
      );
      this.notOvnCookieEvents.set(length, event);
    }
    return this.counters.count(event);
  }

  /**
   * Counts `times` more decodes that answered `event` (one of this decoder's answers), as decode()
   * counts each: for a path that decodes a way's cookies once and sees many packets take it
   * (watch's native lines), so the stats count samples whichever path read them.
   */
  countAgain(event: OvnSampleEvent, times: number): void {
    this.counters.count(event, times);
  }

  stats(): OvnDecoderStats {
    return { ...this.counters.snapshot(), resyncs: this.resyncs };
  }

  /**
   * Closes the connections the decoder opened itself; clients passed in stay open (the decoder
   * leaves their shared mirrors, whose monitors stop when no reader is left), and caches passed in
   * stop feeding its indexes.
   */
  async close(): Promise<void> {
    this.synced = false;
    this.starting = undefined;
    this.attempt?.abort();
    this.attempt = undefined;
    this.resolver?.detach();
    this.resolver = undefined;
    this.emit('change');
    const undo = this.detachers.splice(0).map((detach) => detach());
    const clients = this.ownedClients.splice(0);
    await Promise.all([...undo, ...clients.map((client) => client.close())]);
  }

  private useCallerCaches(caches: OvnSampleDecoderCaches): void {
    this.resolver = new OvnSampleResolver(caches.nbCache, caches.sbCache, undefined, this.changed);
    this.synced = true;
  }

  private async startOnce(options: OvnSampleDecoderOptions): Promise<void> {
    const attempt = new AbortController();
    this.attempt = attempt;
    try {
      await this.connectAndSync(options, attempt.signal);
    } catch (error) {
      // Read before the clean-up below aborts the attempt: only a close() by the caller means "closed".
      const closedByCaller = attempt.signal.aborted;
      // A close() during the attempt already cleaned up, and a newer start() may be running by now.
      if (this.attempt === attempt) {
        await this.close();
      }
      throw closedByCaller ? new OvsdbClosedError('The decoder was closed before start() finished.', { cause: error }) : error;
    }
  }

  /**
   * Joins each database's shared mirror on its client (see SharedMirror) and resolves after their
   * initial sync. Clients the caller passed in are joined before anything is awaited, so a reader
   * started in the same turn (PodDirectory.follow() on the same client) shares one selection and
   * one initial sync with the decoder.
   */
  private async connectAndSync(options: OvnSampleDecoderOptions, signal: AbortSignal): Promise<void> {
    const nbGiven = options.nb instanceof OvsdbClient ? this.join(options.nb, NORTHBOUND_DATABASE) : undefined;
    const sbGiven = options.sb instanceof OvsdbClient ? this.join(options.sb, SOUTHBOUND_DATABASE) : undefined;
    const nb = nbGiven ?? this.join(await this.connect(options.nb, NORTHBOUND_DATABASE, options, signal), NORTHBOUND_DATABASE);
    const sb =
      sbGiven ??
      (options.sb === undefined
        ? undefined
        : this.join(await this.connect(options.sb, SOUTHBOUND_DATABASE, options, signal), SOUTHBOUND_DATABASE));
    const [nbCache, sbCache] = await Promise.all([nb.membership.cache, sb?.membership.cache]);
    signal.throwIfAborted();
    this.resolver = new OvnSampleResolver(nbCache, sbCache, sb === undefined ? undefined : flowTextReader(sb.client), this.changed);
    await Promise.all([nb.membership.synced, sb?.membership.synced]);
    signal.throwIfAborted();
    this.synced = true;
  }

  /** The client of `database`: the one given, or one connected to its remotes, which close() closes. */
  private async connect(database: OvnDatabase, name: string, options: OvnSampleDecoderOptions, signal: AbortSignal): Promise<OvsdbClient> {
    if (database instanceof OvsdbClient) return database;
    const client = await OvsdbClient.connect(typeof database === 'string' ? database : [...database], {
      ...options.client,
      database: name,
      // close() aborts `signal`, which closes this client too when it connects after ownedClients was emptied.
      signal: options.signal === undefined ? signal : AbortSignal.any([signal, options.signal]),
    });
    this.ownedClients.push(client);
    signal.throwIfAborted();
    return client;
  }

  /** Takes a place in `client`'s mirror of `name` and follows the client's state; close() undoes both. */
  private join(client: OvsdbClient, name: string): { client: OvsdbClient; membership: MirrorMembership } {
    const membership = SharedMirror.join(
      client,
      name,
      name === NORTHBOUND_DATABASE ? DECODER_NORTHBOUND_READS : DECODER_SOUTHBOUND_READS,
      name === NORTHBOUND_DATABASE ? northboundSelection : southboundSelection,
    );
    this.detachers.push(() => membership.leave());
    const onStatus = (status: OvsdbStatus): void => {
      this.emit('status', name, status);
    };
    const onResync = (resync: OvsdbResync): void => {
      if (resync.database === name) {
        this.resyncs++;
        this.emit('resync', name, resync);
      }
    };
    const onError = (error: Error): void => emitErrorIfHeard(this, error);
    client.on('status', onStatus);
    client.on('resync', onResync);
    client.on('error', onError);
    this.detachers.push(() => {
      client.off('status', onStatus);
      client.off('resync', onResync);
      client.off('error', onError);
    });
    return { client, membership };
  }
}

/** Reads one Logical_Flow's match and actions with a select: the SB mirror does not hold them. */
function flowTextReader(client: OvsdbClient): LogicalFlowTextSource {
  return async (uuid) => {
    const [result] = (await client.transact(SOUTHBOUND_DATABASE, [
      { op: 'select', table: 'Logical_Flow', where: [['_uuid', '==', ['uuid', uuid]]], columns: ['match', 'actions'] },
    ])) as [{ rows?: { match?: unknown; actions?: unknown }[] }];
    const row = result.rows?.[0];
    return typeof row?.match === 'string' && typeof row.actions === 'string' ? { match: row.match, actions: row.actions } : undefined;
  };
}
