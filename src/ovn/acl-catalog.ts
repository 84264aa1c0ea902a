import type { TableCache } from '../ovsdb/cache';
import type { Row } from '../ovsdb/row';
import type { OvnAclInfo, OvnAclVerdict } from './event';
import { aclMessage, policyOwner } from './owner';
import { mapColumn, numberColumn, stringColumn } from './row-values';

/** How many point ids of changed or deleted ACLs are remembered to explain stale samples. */
const REMEMBERED_POINT_IDS = 65_536;

interface AclEntry {
  readonly verdict: OvnAclVerdict;
  /** Observation point ids that lead to this ACL: its Samples' metadata, or its label. */
  readonly samplePointIds: readonly number[];
  readonly label: number;
}

/** A bounded memory of what point ids meant, oldest forgotten first. */
class PointIdMemory {
  private readonly verdicts = new Map<number, OvnAclVerdict>();

  remember(pointId: number, verdict: OvnAclVerdict): void {
    this.verdicts.delete(pointId);
    this.verdicts.set(pointId, verdict);
    if (this.verdicts.size > REMEMBERED_POINT_IDS) {
      const oldest = this.verdicts.keys().next();
      if (oldest.done !== true) {
        this.verdicts.delete(oldest.value);
      }
    }
  }

  recall(pointId: number): OvnAclVerdict | undefined {
    return this.verdicts.get(pointId);
  }
}

/**
 * Every northbound ACL's verdict (message, owner, ACL fields), computed once per ACL change so
 * that decoding a sample only looks things up. ACL and Sample rows of one transaction arrive in
 * either order, so changed ACLs are recomputed at the end of each update batch.
 */
export class AclCatalog {
  private readonly nb: TableCache;
  private readonly entries = new Map<string, AclEntry>();
  private readonly dirty = new Set<string>();
  private readonly formerSamples = new PointIdMemory();
  private readonly formerLabels = new PointIdMemory();

  constructor(nb: TableCache) {
    this.nb = nb;
    nb.on('change', (table, uuid, oldRow, newRow) => {
      if (table === 'ACL') {
        this.dirty.add(uuid);
      } else if (table === 'Sample') {
        this.markSampleUsers(oldRow ?? newRow);
      }
    });
    nb.on('batch', () => this.refresh());
    for (const row of nb.table('ACL').values()) {
      this.dirty.add(row._uuid);
    }
    this.refresh();
  }

  /** The verdict of a live ACL. */
  verdict(aclUuid: string): OvnAclVerdict | undefined {
    return this.entries.get(aclUuid)?.verdict;
  }

  /** Live ACLs whose sample_new (or sample_est) Sample has this metadata. */
  aclsForSample(column: 'sample_new' | 'sample_est', pointId: number): { sampleFound: boolean; acls: readonly Row[] } {
    const samples = this.nb.table('Sample').lookup('metadata', pointId);
    if (samples.length === 0) {
      return { sampleFound: false, acls: [] };
    }
    const acls: Row[] = [];
    for (const sample of samples) {
      acls.push(...this.nb.table('ACL').lookup(column, sample._uuid));
    }
    return { sampleFound: true, acls };
  }

  /** Live ACLs with this label (ovn-northd then uses the label as the point id). */
  aclsForLabel(label: number): readonly Row[] {
    return label === 0 ? [] : this.nb.table('ACL').lookup('label', label);
  }

  /** What a Sample metadata meant before its ACL changed or went away. */
  formerSampleVerdict(pointId: number): OvnAclVerdict | undefined {
    return this.formerSamples.recall(pointId);
  }

  formerLabelVerdict(label: number): OvnAclVerdict | undefined {
    return this.formerLabels.recall(label);
  }

  private markSampleUsers(sample: Row | undefined): void {
    if (sample === undefined) {
      return;
    }
    for (const column of ['sample_new', 'sample_est']) {
      for (const acl of this.nb.table('ACL').lookup(column, sample._uuid)) {
        this.dirty.add(acl._uuid);
      }
    }
  }

  private refresh(): void {
    for (const uuid of this.dirty) {
      const before = this.entries.get(uuid);
      const row = this.nb.table('ACL').get(uuid);
      const after = row === undefined ? undefined : this.describe(row);
      if (after === undefined) {
        this.entries.delete(uuid);
      } else {
        this.entries.set(uuid, after);
      }
      if (before !== undefined) {
        this.rememberDropped(before, after);
      }
    }
    this.dirty.clear();
  }

  private rememberDropped(before: AclEntry, after: AclEntry | undefined): void {
    for (const pointId of before.samplePointIds) {
      if (after === undefined || !after.samplePointIds.includes(pointId) || after.verdict.message !== before.verdict.message) {
        this.formerSamples.remember(pointId, before.verdict);
      }
    }
    if (before.label !== 0 && (after === undefined || after.label !== before.label || after.verdict.message !== before.verdict.message)) {
      this.formerLabels.remember(before.label, before.verdict);
    }
  }

  private describe(row: Row): AclEntry {
    const externalIds = mapColumn(row, 'external_ids');
    const name = stringColumn(row, 'name');
    const action = stringColumn(row, 'action') ?? '';
    const label = numberColumn(row, 'label') ?? 0;
    const acl: OvnAclInfo = Object.freeze({
      uuid: row._uuid,
      ...(name === undefined ? {} : { name }),
      priority: numberColumn(row, 'priority') ?? 0,
      direction: stringColumn(row, 'direction') ?? '',
      match: stringColumn(row, 'match') ?? '',
      action,
      tier: numberColumn(row, 'tier') ?? 0,
      label,
    });
    const owner = policyOwner(externalIds);
    const verdict: OvnAclVerdict = Object.freeze({
      message: aclMessage(action, owner, acl),
      action,
      ...(owner === undefined ? {} : { owner: Object.freeze(owner) }),
      acl,
    });
    const samplePointIds: number[] = [];
    for (const column of ['sample_new', 'sample_est']) {
      const sampleUuid = stringColumn(row, column);
      const sample = sampleUuid === undefined ? undefined : this.nb.table('Sample').get(sampleUuid);
      const metadata = sample === undefined ? undefined : numberColumn(sample, 'metadata');
      if (metadata !== undefined && !samplePointIds.includes(metadata)) {
        samplePointIds.push(metadata);
      }
    }
    return { verdict, samplePointIds, label };
  }
}
