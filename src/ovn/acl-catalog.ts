import type { TableCache } from '../ovsdb/cache';
import { ModelView, type ReadRow } from '../ovsdb/model';
import { NO_ROWS } from '../ovsdb/table-store';
import type { OvnAclInfo, OvnAclVerdict } from './event';
import type { Tables } from './northbound.generated';
import { aclMessage, policyOwner } from './owner';
import { PointIdMemory } from './point-id-memory';

/** What the catalog reads of the northbound database, and looks rows up by. */
export const ACL_CATALOG_READS = {
  ACL: {
    columns: ['name', 'priority', 'direction', 'match', 'action', 'label', 'tier', 'sample_new', 'sample_est', 'external_ids'],
    indexes: ['sample_new', 'sample_est', 'label'],
  },
  Sample: { columns: ['metadata'], indexes: ['metadata'] },
} as const;

type Acl = ReadRow<Tables, typeof ACL_CATALOG_READS, 'ACL'>;
type Sample = ReadRow<Tables, typeof ACL_CATALOG_READS, 'Sample'>;

/** Which point id space a sample's obs_point_id is in: a Sample's metadata (per app) or an ACL label. */
export type PointIdKind = 'sample_new' | 'sample_est' | 'label';

const KINDS: readonly PointIdKind[] = ['sample_new', 'sample_est', 'label'];

/** The ACLs a point id leads to: the first one's verdict, and the others' uuids. */
export interface AclMatch {
  readonly verdict: OvnAclVerdict;
  /** Further ACLs sharing the point id (ovn-kubernetes gives identical ACLs one Sample). */
  readonly otherAcls: readonly string[] | undefined;
}

/**
 * Finds the ACLs behind a point id through the cache's own indexes (Sample.metadata, then
 * ACL.sample_new / sample_est / label) and keeps the answer, with each sampled ACL's verdict
 * (message, owner, ACL fields), until ACLs or Samples change: a repeated point id costs one map
 * lookup, and ACLs that are never sampled cost no memory beyond the cache.
 * When an ACL changes or goes away, the verdicts of the point ids it gives up are remembered:
 * conntrack keeps tagging established connections with them.
 */
export class AclCatalog {
  private readonly nb: ModelView<Tables, typeof ACL_CATALOG_READS>;
  private readonly stop: () => void;
  private readonly verdicts = new Map<string, OvnAclVerdict>();
  /** Point ids seen in samples since the last ACL or Sample change, answered with one lookup. */
  private readonly hot: Record<PointIdKind, Map<number, AclMatch>> = { sample_new: new Map(), sample_est: new Map(), label: new Map() };
  /** Samples deleted in the update being applied, whose ACL change may come later in it. */
  private readonly samplesLeaving = new Map<string, number>();
  private readonly formerSamples = new PointIdMemory();
  private readonly formerLabels = new PointIdMemory();

  constructor(nb: TableCache) {
    this.nb = new ModelView(nb, ACL_CATALOG_READS);
    this.stop = this.nb.follow(
      (table, uuid, oldRow, newRow) => {
        for (const kind of KINDS) {
          // Map.clear() allocates a fresh table even when empty; initial syncs change every row.
          if (this.hot[kind].size > 0) {
            this.hot[kind].clear();
          }
        }
        if (table === 'ACL') {
          this.aclChanged(uuid, oldRow, newRow);
        } else if (oldRow !== undefined) {
          this.sampleChanged(uuid, oldRow, newRow);
        }
      },
      () => this.samplesLeaving.clear(),
    );
  }

  /** Stops following the cache, which may outlive this catalog (a cache the caller owns). */
  detach(): void {
    this.stop();
  }

  /** The live ACLs behind a sample's point id, or undefined when none has it. */
  match(kind: PointIdKind, pointId: number): AclMatch | undefined {
    const known = this.hot[kind].get(pointId);
    if (known !== undefined) {
      return known;
    }
    const acls = this.matching(kind, pointId);
    const first = acls[0];
    if (first === undefined) {
      return undefined;
    }
    const found: AclMatch = Object.freeze({
      verdict: this.verdict(first),
      otherAcls: acls.length > 1 ? Object.freeze(acls.slice(1).map((acl) => acl._uuid)) : undefined,
    });
    this.hot[kind].set(pointId, found);
    return found;
  }

  private matching(kind: PointIdKind, pointId: number): readonly Acl[] {
    const acls = this.nb.table('ACL');
    if (kind === 'label') {
      // ovn-northd treats label 0 as "no label".
      return pointId === 0 ? NO_ROWS : acls.lookup('label', pointId);
    }
    const samples = this.nb.table('Sample').lookup('metadata', pointId);
    // Sample.metadata is a unique index: one Sample is the rule, and its bucket needs no copy.
    return samples.length === 1 ? acls.lookup(kind, samples[0]!._uuid) : samples.flatMap((sample) => acls.lookup(kind, sample._uuid));
  }

  /** Whether a Sample with this metadata exists (an ACL may still not use it for that app). */
  hasSample(pointId: number): boolean {
    return this.nb.table('Sample').lookup('metadata', pointId).length > 0;
  }

  /** The verdict of a live ACL, computed on its first sample after each change. */
  private verdict(acl: Acl): OvnAclVerdict {
    let verdict = this.verdicts.get(acl._uuid);
    if (verdict === undefined) {
      verdict = describeAcl(acl);
      this.verdicts.set(acl._uuid, verdict);
    }
    return verdict;
  }

  /** The verdict of the live ACL with this uuid, if there is one. */
  verdictOf(aclUuid: string): OvnAclVerdict | undefined {
    const acl = this.nb.table('ACL').get(aclUuid);
    return acl === undefined ? undefined : this.verdict(acl);
  }

  /** What a Sample metadata or a label meant before its ACL changed or went away. */
  formerVerdict(kind: PointIdKind, pointId: number): OvnAclVerdict | undefined {
    return kind === 'label' ? this.formerLabels.recall(pointId) : this.formerSamples.recall(pointId);
  }

  private aclChanged(uuid: string, oldRow: Acl | undefined, newRow: Acl | undefined): void {
    const before = this.verdicts.get(uuid);
    this.verdicts.delete(uuid);
    if (oldRow === undefined) {
      return;
    }
    let oldVerdict = before;
    let sameMeaning: boolean | undefined;
    for (const kind of KINDS) {
      const oldPoint = this.pointId(oldRow, kind);
      if (oldPoint === undefined) {
        continue;
      }
      oldVerdict ??= describeAcl(oldRow);
      sameMeaning ??= newRow !== undefined && describeAcl(newRow).message === oldVerdict.message;
      // A new Sample may be inserted later in this update: then the id is remembered needlessly, which is harmless.
      if (!sameMeaning || newRow === undefined || this.pointId(newRow, kind) !== oldPoint) {
        (kind === 'label' ? this.formerLabels : this.formerSamples).remember(oldPoint, oldVerdict);
      }
    }
  }

  private sampleChanged(uuid: string, oldRow: Sample, newRow: Sample | undefined): void {
    const metadata = oldRow.metadata;
    if (newRow === undefined) {
      this.samplesLeaving.set(uuid, metadata);
      return;
    }
    if (newRow.metadata === metadata) {
      return;
    }
    // Renumbered in place: established connections keep carrying the old metadata.
    const acls = this.nb.table('ACL');
    for (const kind of ['sample_new', 'sample_est'] as const) {
      for (const acl of acls.lookup(kind, uuid)) {
        this.formerSamples.remember(metadata, this.verdict(acl));
      }
    }
  }

  private pointId(acl: Acl, kind: PointIdKind): number | undefined {
    if (kind === 'label') {
      return acl.label === 0 ? undefined : acl.label;
    }
    const sampleUuid = acl[kind];
    if (sampleUuid === undefined) {
      return undefined;
    }
    const sample = this.nb.table('Sample').get(sampleUuid);
    return sample === undefined ? this.samplesLeaving.get(sampleUuid) : sample.metadata;
  }
}

function describeAcl(row: Acl): OvnAclVerdict {
  const { name, action } = row;
  const acl: OvnAclInfo = Object.freeze({
    uuid: row._uuid,
    ...(name === undefined ? {} : { name }),
    priority: row.priority,
    direction: row.direction,
    match: row.match,
    action,
    tier: row.tier,
    label: row.label,
  });
  const owner = policyOwner(row.external_ids);
  return Object.freeze({
    message: aclMessage(action, owner, acl),
    action,
    ...(owner === undefined ? {} : { owner: Object.freeze(owner) }),
    acl,
  });
}
