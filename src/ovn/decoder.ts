import { EventEmitter } from 'node:events';
import { OvnSchemaUnsupportedError, OvsdbClosedError } from '../errors';
import { TableCache, type CacheSelection } from '../ovsdb/cache';
import { OvsdbClient, type OvsdbClientOptions, type OvsdbStatus } from '../ovsdb/client';
import { emitErrorIfHeard } from '../ovsdb/optional-error';
import type { DatabaseSchema } from '../ovsdb/schema';
import type { PsampleMessage } from '../psample/types';
import { AclCatalog, type PointIdKind } from './acl-catalog';
import { hex32, observationIdsFromCookie, splitObservationDomain } from './cookie';
import { DatapathDirectory } from './datapath-directory';
import { DecodeCounters, type OvnDecoderStats } from './decode-stats';
import type {
  OvnAclVerdict,
  OvnDatapathInfo,
  OvnLogicalFlowInfo,
  OvnSampleApp,
  OvnSampleEvent,
  OvnSampleStatus,
  OvnStageHint,
  OvnStaleReason,
  OvnUnknownReason,
} from './event';
import { LogicalFlowDirectory } from './flow-directory';
import { SamplingApps } from './sampling-apps';
import { northboundSelection, southboundSelection } from './selection';
import { StageHintIndex } from './stage-hints';

export const NORTHBOUND_DATABASE = 'OVN_Northbound';
export const SOUTHBOUND_DATABASE = 'OVN_Southbound';

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
  /** Connection problems; the client keeps reconnecting. Emitted only while someone listens. */
  error: [error: Error];
}

interface Resolvers {
  readonly catalog: AclCatalog;
  readonly apps: SamplingApps;
  readonly datapaths: DatapathDirectory;
  readonly flows: LogicalFlowDirectory | undefined;
  /** Takes every resolver's listeners off the caches, which may outlive the decoder. */
  detach(): void;
}

interface Base {
  readonly obsDomainId: number;
  readonly obsPointId: number;
  readonly appId: number;
  readonly datapath: OvnDatapathInfo;
}

/**
 * Tells which OVN ACL (and which Kubernetes policy behind it) or which logical flow produced an
 * OVS psample sample, from its 8-byte cookie. The databases are mirrored in memory and followed
 * live, so decode() is synchronous, never throws, and costs a few map lookups.
 */
export class OvnSampleDecoder extends EventEmitter<OvnSampleDecoderEvents> {
  private readonly options: OvnSampleDecoderOptions | undefined;
  private readonly callerCaches: OvnSampleDecoderCaches | undefined;
  private readonly counters = new DecodeCounters();
  private readonly ownedClients: OvsdbClient[] = [];
  /** Undoes what was put on clients the caller owns (listeners, monitors), on close(). */
  private readonly detachers: (() => void | Promise<void>)[] = [];
  private resolvers: Resolvers | undefined;
  private synced = false;
  private starting: Promise<void> | undefined;
  /** Aborted by close(), so a start() in progress stops and closes what it opens afterwards. */
  private attempt: AbortController | undefined;

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
        if (this.resolvers === undefined && this.callerCaches !== undefined) {
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
    const { appId, datapathKey } = splitObservationDomain(domain);
    const resolvers = this.resolvers;
    if (resolvers === undefined || !this.synced) {
      const unsynced: Base = { obsDomainId: domain, obsPointId: point, appId, datapath: { key: datapathKey } };
      return this.counters.count(
        makeEvent(unsynced, {
          status: 'unknown',
          reason: 'not-synced',
          message: 'The OVN databases are not synced yet: await decoder.start() before decoding.',
        }),
      );
    }
    const base: Base = { obsDomainId: domain, obsPointId: point, appId, datapath: resolvers.datapaths.resolve(datapathKey) };
    if (appId === 0) {
      return this.counters.count(this.decodeAcl(resolvers, base, 'acl-label'));
    }
    const app = resolvers.apps.typeOf(appId);
    switch (app) {
      case 'acl-new':
      case 'acl-est':
        return this.counters.count(this.decodeAcl(resolvers, base, app));
      case 'drop':
        return this.counters.count(this.decodeDrop(resolvers, base));
      default:
        return this.counters.count(
          makeEvent(base, {
            status: 'unknown',
            reason: 'unknown-app',
            message: `No Sampling_App has id ${appId}: not an OVN sample, or sampling apps were reconfigured.`,
          }),
        );
    }
  }

  /** Decodes an 8-byte psample user cookie (obs_domain_id, obs_point_id; big-endian). */
  decodeCookie(cookie: Uint8Array): OvnSampleEvent {
    const ids = observationIdsFromCookie(cookie);
    if (ids === undefined) {
      return this.counters.count(
        makeEvent(NO_COOKIE, {
          status: 'unknown',
          reason: 'not-ovn-cookie',
          message: `The sample's cookie has ${cookie.byteLength} bytes, not the 8 of an OVS sample.`,
        }),
      );
    }
    return this.decode(ids.obsDomainId, ids.obsPointId);
  }

  decodeSample(message: PsampleMessage): OvnSampleEvent {
    return this.decodeCookie(message.userCookie ?? new Uint8Array(0));
  }

  stats(): OvnDecoderStats {
    return this.counters.snapshot();
  }

  /**
   * Closes the connections the decoder opened itself; clients passed in stay open but stop
   * feeding the decoder's caches, and caches passed in stop feeding its indexes.
   */
  async close(): Promise<void> {
    this.synced = false;
    this.starting = undefined;
    this.attempt?.abort();
    this.attempt = undefined;
    this.resolvers?.detach();
    this.resolvers = undefined;
    const undo = this.detachers.splice(0).map((detach) => detach());
    const clients = this.ownedClients.splice(0);
    await Promise.all([...undo, ...clients.map((client) => client.close())]);
  }

  private useCallerCaches(caches: OvnSampleDecoderCaches): void {
    this.resolvers = buildResolvers(caches.nbCache, caches.sbCache);
    this.synced = true;
  }

  private async startOnce(options: OvnSampleDecoderOptions): Promise<void> {
    const attempt = new AbortController();
    this.attempt = attempt;
    try {
      await this.connectAndSync(options, attempt.signal);
    } catch (error) {
      // A close() during the attempt already cleaned up, and a newer start() may be running by now.
      if (this.attempt === attempt) {
        await this.close();
      }
      throw attempt.signal.aborted ? new OvsdbClosedError('The decoder was closed before start() finished.', { cause: error }) : error;
    }
  }

  private async connectAndSync(options: OvnSampleDecoderOptions, signal: AbortSignal): Promise<void> {
    const nb = await this.open(options.nb, NORTHBOUND_DATABASE, options, signal);
    const sb = options.sb === undefined ? undefined : await this.open(options.sb, SOUTHBOUND_DATABASE, options, signal);
    signal.throwIfAborted();
    const nbCache = new TableCache(nb.schema, northboundSelection(nb.schema));
    const sbCache = sb === undefined ? undefined : new TableCache(sb.schema, southboundSelection(sb.schema));
    // Attached before the initial sync so the indexes grow with the cache instead of rescanning it.
    this.resolvers = buildResolvers(nbCache, sbCache);
    await Promise.all([
      this.follow(nb.client, NORTHBOUND_DATABASE, nbCache, signal),
      sb === undefined || sbCache === undefined ? undefined : this.follow(sb.client, SOUTHBOUND_DATABASE, sbCache, signal),
    ]);
    signal.throwIfAborted();
    this.synced = true;
  }

  /** Monitors `cache` through `client`; a client the caller owns is told to stop on close(). */
  private follow(client: OvsdbClient, database: string, cache: TableCache, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (!this.ownedClients.includes(client)) {
      this.detachers.push(() => client.unmonitor(cache));
    }
    return client.monitor(database, cache);
  }

  private async open(
    database: OvnDatabase,
    name: string,
    options: OvnSampleDecoderOptions,
    signal: AbortSignal,
  ): Promise<{ client: OvsdbClient; schema: DatabaseSchema }> {
    let client: OvsdbClient;
    if (database instanceof OvsdbClient) {
      client = database;
    } else {
      client = await OvsdbClient.connect(typeof database === 'string' ? database : [...database], {
        ...options.client,
        database: name,
        // close() aborts `signal`, which closes this client too when it connects after ownedClients was emptied.
        signal: options.signal === undefined ? signal : AbortSignal.any([signal, options.signal]),
      });
      this.ownedClients.push(client);
    }
    signal.throwIfAborted();
    const onStatus = (status: OvsdbStatus): void => {
      this.emit('status', name, status);
    };
    const onError = (error: Error): void => emitErrorIfHeard(this, error);
    client.on('status', onStatus);
    client.on('error', onError);
    this.detachers.push(() => {
      client.off('status', onStatus);
      client.off('error', onError);
    });
    return { client, schema: await client.getSchema(name) };
  }

  private decodeAcl(resolvers: Resolvers, base: Base, app: Exclude<OvnSampleApp, 'drop'>): OvnSampleEvent {
    const point = base.obsPointId;
    const kind: PointIdKind = app === 'acl-label' ? 'label' : app === 'acl-new' ? 'sample_new' : 'sample_est';
    const found = resolvers.catalog.match(kind, point);
    if (found !== undefined) {
      return makeEvent(base, {
        status: 'decoded',
        app,
        message: found.verdict.message,
        verdict: found.verdict,
        otherAcls: found.otherAcls,
      });
    }
    const sampleFound = kind === 'label' || resolvers.catalog.hasSample(point);
    const previous = resolvers.catalog.formerVerdict(kind, point);
    const missing = kind === 'label' ? `no ACL has label ${point}` : sampleFound ? `no ACL uses the Sample with metadata ${point} as ${kind}` : `no Sample has metadata ${point}`;
    return makeEvent(base, {
      status: 'stale',
      reason: sampleFound ? 'acl-not-found' : 'sample-not-found',
      app,
      message:
        previous === undefined
          ? `Stale sample: ${missing} (its ACL was updated or deleted, or is not in the database yet).`
          : `${previous.message} (stale: ${missing}; the ACL was updated or deleted since the connection started)`,
      previous,
    });
  }

  private decodeDrop(resolvers: Resolvers, base: Base): OvnSampleEvent {
    if (resolvers.flows === undefined) {
      return makeEvent(base, {
        status: 'unknown',
        reason: 'no-southbound',
        app: 'drop',
        action: 'drop',
        message: 'Dropped by an OVN logical flow; naming it needs the southbound database (--sb).',
      });
    }
    const binding = resolvers.datapaths.binding(base.datapath.key);
    const flow = resolvers.flows.find(base.obsPointId, binding?._uuid);
    if (flow === undefined) {
      return makeEvent(base, {
        status: 'stale',
        reason: 'flow-not-found',
        app: 'drop',
        action: 'drop',
        message: `Dropped by an OVN logical flow that no longer exists (no Logical_Flow UUID starts with ${hex32(base.obsPointId)}).`,
      });
    }
    const hintedAcl = flow.hint?.table === 'ACL' && flow.hint.uuid !== undefined ? resolvers.catalog.verdictOf(flow.hint.uuid) : undefined;
    const aclExplains = hintedAcl !== undefined && hintedAcl.owner !== undefined && (hintedAcl.action === 'drop' || hintedAcl.action === 'reject');
    return makeEvent(base, {
      status: 'decoded',
      app: 'drop',
      action: 'drop',
      message: aclExplains ? hintedAcl.message : flowMessage(flow.stage, flow.source, flow.hint),
      verdict: hintedAcl,
      flow,
    });
  }
}

const NO_COOKIE: Base = Object.freeze({ obsDomainId: 0, obsPointId: 0, appId: 0, datapath: Object.freeze({ key: 0 }) });

interface EventParts {
  readonly status: OvnSampleStatus;
  readonly reason?: OvnStaleReason | OvnUnknownReason;
  readonly app?: OvnSampleApp;
  readonly message: string;
  /** Owner and ACL fields; its action unless `action` overrides it. */
  readonly verdict?: OvnAclVerdict | undefined;
  readonly action?: string;
  readonly otherAcls?: readonly string[] | undefined;
  readonly flow?: OvnLogicalFlowInfo;
  readonly previous?: OvnAclVerdict | undefined;
}

/**
 * Every event has the same keys in the same order (absent ones undefined, which JSON omits):
 * one object shape keeps the per-sample path monomorphic and free of object spreads.
 */
function makeEvent(base: Base, parts: EventParts): OvnSampleEvent {
  return {
    status: parts.status,
    reason: parts.reason,
    obsDomainId: base.obsDomainId,
    obsPointId: base.obsPointId,
    appId: base.appId,
    app: parts.app,
    message: parts.message,
    action: parts.action ?? parts.verdict?.action,
    owner: parts.verdict?.owner,
    acl: parts.verdict?.acl,
    otherAcls: parts.otherAcls,
    flow: parts.flow,
    datapath: base.datapath,
    previous: parts.previous,
  };
}

function buildResolvers(nbCache: TableCache, sbCache: TableCache | undefined): Resolvers {
  const catalog = new AclCatalog(nbCache);
  const apps = new SamplingApps(nbCache);
  const datapaths = new DatapathDirectory(nbCache, sbCache);
  const flows = sbCache === undefined ? undefined : new LogicalFlowDirectory(sbCache, new StageHintIndex(nbCache));
  return {
    catalog,
    apps,
    datapaths,
    flows,
    detach: () => {
      catalog.detach();
      apps.detach();
      datapaths.detach();
      flows?.detach();
    },
  };
}

/** Fails early, with the missing piece named, when a caller-built cache cannot serve the decoder. */
function assertSelection(cache: TableCache, selection: CacheSelection): void {
  const monitored = cache.monitoredColumns();
  for (const [table, { columns, indexes = [] }] of Object.entries(selection)) {
    const present = monitored.get(table);
    const missing = columns.filter((column) => present?.includes(column) !== true);
    if (present === undefined || missing.length > 0) {
      const what = present === undefined ? `table ${table}` : `${table} columns ${missing.join(', ')}`;
      throw new OvnSchemaUnsupportedError(
        `The ${cache.schema.name} cache lacks ${what}: build it with ${cache.schema.name === NORTHBOUND_DATABASE ? 'northboundSelection' : 'southboundSelection'}(schema).`,
      );
    }
    for (const column of indexes) {
      cache.table(table).lookup(column, '');
    }
  }
}

function flowMessage(stage: string | undefined, source: string | undefined, hint: OvnStageHint | undefined): string {
  const where = [stage === undefined ? 'an OVN logical flow' : `OVN logical flow in stage ${stage}`, source === undefined ? '' : ` (${source})`].join('');
  if (hint === undefined) {
    return `Dropped by ${where}`;
  }
  const about = hint.table === undefined ? `northbound row ${hint.hint}` : `${hint.table} ${hint.name ?? hint.uuid ?? hint.hint}`;
  return `Dropped by ${where}, created for ${about}`;
}
