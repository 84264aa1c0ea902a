import type { TableCache } from '../ovsdb/cache';
import { AclCatalog, type PointIdKind } from './acl-catalog';
import { controllerDropMessage, controllerDropTable } from './controller-tables';
import { hex32, splitObservationDomain } from './cookie';
import { DatapathDirectory } from './datapath-directory';
import { DropSampling } from './drop-sampling';
import { EventMemo } from './event-memo';
import type {
  OvnAclVerdict,
  OvnDatapathInfo,
  OvnLogicalFlowInfo,
  OvnOpenFlowTableInfo,
  OvnSampleApp,
  OvnSampleEvent,
  OvnSampleStatus,
  OvnStageHint,
  OvnStaleReason,
  OvnUnknownReason,
} from './event';
import { LogicalFlowDirectory, type LogicalFlowTextSource } from './flow-directory';
import type { PolicyOwner } from './owner';
import { SamplingApps } from './sampling-apps';
import { StageHintIndex } from './stage-hints';

interface Base {
  readonly obsDomainId: number;
  readonly obsPointId: number;
  readonly appId: number;
  readonly datapath: OvnDatapathInfo;
}

/**
 * Answers what a sample's observation ids mean, from indexes that follow the NB (and SB) caches
 * change by change: each answer costs a few map lookups, and is kept (frozen, shared by every
 * sample of the cookie) until either database changes. Knows nothing of connections.
 */
export class OvnSampleResolver {
  private readonly nbCache: TableCache;
  private readonly sbCache: TableCache | undefined;
  private readonly memo = new EventMemo();
  private readonly forget = (): void => {
    this.memo.clear();
    this.onForget?.();
  };
  private readonly catalog: AclCatalog;
  private readonly apps: SamplingApps;
  private readonly dropSampling: DropSampling;
  private readonly datapaths: DatapathDirectory;
  private readonly flows: LogicalFlowDirectory | undefined;

  /**
   * Attach before the caches' initial sync, so the indexes grow with them instead of rescanning.
   * `flowText` reads a logical flow's match and actions, which the SB mirror does not hold;
   * `onForget` hears when the answers kept so far are forgotten (either database changed).
   */
  constructor(
    nbCache: TableCache,
    sbCache: TableCache | undefined,
    flowText?: LogicalFlowTextSource,
    private readonly onForget?: () => void,
  ) {
    this.nbCache = nbCache;
    this.sbCache = sbCache;
    nbCache.on('change', this.forget);
    sbCache?.on('change', this.forget);
    this.catalog = new AclCatalog(nbCache);
    this.apps = new SamplingApps(nbCache);
    this.dropSampling = new DropSampling(nbCache, sbCache);
    this.datapaths = new DatapathDirectory(nbCache, sbCache);
    this.flows = sbCache === undefined ? undefined : new LogicalFlowDirectory(sbCache, new StageHintIndex(nbCache), flowText);
  }

  /** Resolves once what resolve() would read on demand for these ids is here (a drop sample's flow text). */
  async prepare(obsDomainId: number, obsPointId: number): Promise<void> {
    const { appId, datapathKey } = splitObservationDomain(obsDomainId);
    if (this.flows !== undefined && datapathKey !== 0 && appId === this.northdDropApp()) {
      await this.flows.prepare(obsPointId, this.datapaths.binding(datapathKey)?._uuid);
    }
  }

  /** Takes every index's listeners off the caches, which may outlive the resolver. */
  detach(): void {
    this.nbCache.off('change', this.forget);
    this.sbCache?.off('change', this.forget);
    this.catalog.detach();
    this.apps.detach();
    this.datapaths.detach();
    this.flows?.detach();
  }

  /** Whether `event` is the answer resolve() keeps for its ids until the databases change. */
  keeps(event: OvnSampleEvent): boolean {
    return this.memo.get(event.obsDomainId, event.obsPointId) === event;
  }

  resolve(obsDomainId: number, obsPointId: number): OvnSampleEvent {
    const known = this.memo.get(obsDomainId, obsPointId);
    if (known !== undefined) return known;
    const event = Object.freeze(this.compute(obsDomainId, obsPointId));
    // A drop sample's flow whose match and actions are still being read is answered again,
    // complete, once they are here.
    if (event.flow === undefined || event.flow.match !== undefined) this.memo.set(obsDomainId, obsPointId, event);
    return event;
  }

  /**
   * The app id of ovn-northd's drop flows: the Sampling_App of type drop when there is one, else
   * NB_Global options:debug_drop_domain_id while debug_drop_collector_set is on (northd/debug.c).
   */
  private northdDropApp(): number | undefined {
    const fromApps = this.apps.dropAppId;
    if (fromApps !== undefined) return fromApps;
    const northd = this.dropSampling.northd();
    return northd.collectorSet === 0 ? undefined : northd.domain;
  }

  private compute(obsDomainId: number, obsPointId: number): OvnSampleEvent {
    const { appId, datapathKey } = splitObservationDomain(obsDomainId);
    if (datapathKey === 0 && this.isControllerDrop(appId)) {
      return this.decodeControllerDrop({ obsDomainId, obsPointId, appId, datapath: { key: 0 } });
    }
    const base: Base = { obsDomainId, obsPointId, appId, datapath: this.datapaths.resolve(datapathKey) };
    const app = appId === 0 ? 'acl-label' : this.apps.typeOf(appId);
    switch (app) {
      case 'acl-label': {
        const event = this.decodeAcl(base, app);
        // With debug drop sampling on and neither a drop app nor a domain id, northd's drop flows sample with app 0 too.
        return event.status === 'decoded' || this.northdDropApp() !== 0 ? event : this.decodeDrop(base);
      }
      case 'acl-new':
      case 'acl-est':
        return this.decodeAcl(base, app);
      case 'drop':
        return this.decodeDrop(base);
      default:
        return appId === this.northdDropApp()
          ? this.decodeDrop(base)
          : makeEvent(base, {
              status: 'unknown',
              reason: 'unknown-app',
              message: `No Sampling_App has id ${appId}: not an OVN sample, or sampling apps were reconfigured.`,
            });
    }
  }

  /**
   * Whether a sample with datapath key 0, which no logical datapath has, is ovn-controller's drop
   * in one of its own OpenFlow tables: its app is ovn-controller's drop domain (SB_Global
   * options:debug_drop_domain_id while drop sampling is on), or northd's (the settings changed
   * since it was taken: a drop with key 0 is still no logical flow's).
   */
  private isControllerDrop(appId: number): boolean {
    const controller = this.dropSampling.controller();
    return (controller.collectorSet !== 0 && appId === controller.domain) || appId === this.northdDropApp();
  }

  /** A sample of ovn-controller's put_drop(): its point id is the OpenFlow table it dropped in. */
  private decodeControllerDrop(base: Base): OvnSampleEvent {
    const openflowTable = Object.freeze(controllerDropTable(base.obsPointId, this.dropSampling.release()));
    return makeEvent(base, {
      status: 'decoded',
      app: 'drop',
      action: 'drop',
      message: controllerDropMessage(openflowTable),
      openflowTable,
    });
  }

  private decodeAcl(base: Base, app: Exclude<OvnSampleApp, 'drop'>): OvnSampleEvent {
    const point = base.obsPointId;
    const kind: PointIdKind = app === 'acl-label' ? 'label' : app === 'acl-new' ? 'sample_new' : 'sample_est';
    const found = this.catalog.match(kind, point);
    if (found !== undefined) {
      return makeEvent(base, {
        status: 'decoded',
        app,
        message: found.verdict.message,
        verdict: found.verdict,
        otherAcls: found.otherAcls,
      });
    }
    const sampleFound = kind === 'label' || this.catalog.hasSample(point);
    const previous = this.catalog.formerVerdict(kind, point);
    const missing =
      kind === 'label'
        ? `no ACL has label ${point}`
        : sampleFound
          ? `no ACL uses the Sample with metadata ${point} as ${kind}`
          : `no Sample has metadata ${point}`;
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

  private decodeDrop(base: Base): OvnSampleEvent {
    if (this.flows === undefined) {
      return makeEvent(base, {
        status: 'unknown',
        reason: 'no-southbound',
        app: 'drop',
        action: 'drop',
        message: 'Dropped by an OVN logical flow; naming it needs the southbound database (--sb).',
      });
    }
    const binding = this.datapaths.binding(base.datapath.key);
    const flow = this.flows.find(base.obsPointId, binding?._uuid);
    if (flow === undefined) {
      return makeEvent(base, {
        status: 'stale',
        reason: 'flow-not-found',
        app: 'drop',
        action: 'drop',
        message: `Dropped by an OVN logical flow that no longer exists (no Logical_Flow UUID starts with ${hex32(base.obsPointId)}).`,
      });
    }
    const hintedAcl = flow.hint?.table === 'ACL' && flow.hint.uuid !== undefined ? this.catalog.verdictOf(flow.hint.uuid) : undefined;
    return makeEvent(base, {
      status: 'decoded',
      app: 'drop',
      action: 'drop',
      message: hintedAcl !== undefined && aclExplainsDrop(hintedAcl) ? hintedAcl.message : flowMessage(flow),
      verdict: hintedAcl,
      flow,
    });
  }
}

/**
 * Whether a drop sample's logical flow is worded as the ACL its stage-hint names: only an ACL that
 * drops (or rejects) and that a Kubernetes owner explains says more than the flow itself.
 */
export function aclExplainsDrop(acl: { readonly owner?: PolicyOwner | undefined; readonly action?: string | undefined }): boolean {
  return acl.owner !== undefined && (acl.action === 'drop' || acl.action === 'reject');
}

/** The event for a sample that cannot be resolved at all (no cookie, or no synced databases). */
export function unresolvedEvent(
  obsDomainId: number,
  obsPointId: number,
  reason: Extract<OvnUnknownReason, 'not-ovn-cookie' | 'not-synced'>,
  message: string,
): OvnSampleEvent {
  const { appId, datapathKey } = splitObservationDomain(obsDomainId);
  return makeEvent({ obsDomainId, obsPointId, appId, datapath: { key: datapathKey } }, { status: 'unknown', reason, message });
}

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
  readonly openflowTable?: OvnOpenFlowTableInfo;
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
    openflowTable: parts.openflowTable,
    datapath: base.datapath,
    previous: parts.previous,
  };
}

function flowMessage({ stage, source, hint, description }: OvnLogicalFlowInfo): string {
  const where = [
    stage === undefined ? 'an OVN logical flow' : `OVN logical flow in stage ${stage}`,
    source === undefined ? '' : ` (${source})`,
  ].join('');
  const why = description === undefined ? '' : `: ${description}`;
  if (hint === undefined) {
    return `Dropped by ${where}${why}`;
  }
  return `Dropped by ${where}, created for ${hintText(hint)}${why}`;
}

function hintText(hint: OvnStageHint): string {
  return hint.table === undefined ? `northbound row ${hint.hint}` : `${hint.table} ${hint.name ?? hint.uuid ?? hint.hint}`;
}
