import type { TableCache } from '../ovsdb/cache';
import type { Row } from '../ovsdb/row';
import { flowPointId } from './cookie';
import type { OvnLogicalFlowInfo } from './event';
import { externalId } from './external-ids';
import { mapColumn, numberColumn, stringColumn } from './row-values';
import type { StageHintIndex } from './stage-hints';
import { UuidBuckets } from './uuid-buckets';

/**
 * SB logical flows keyed by the point id their drop samples carry. Several flows can share the
 * 32-bit prefix, so the datapath the sample came from breaks ties.
 */
export class LogicalFlowDirectory {
  private readonly sb: TableCache;
  private readonly hints: StageHintIndex;
  private readonly byPointId = new UuidBuckets<number>();
  private readonly described = new Map<string, { readonly hintVersion: number; readonly info: OvnLogicalFlowInfo }>();

  private readonly onChange = (table: string, uuid: string, oldRow: Row | undefined, newRow: Row | undefined): void => {
    if (table !== 'Logical_Flow') {
      return;
    }
    this.described.delete(uuid);
    if (oldRow === undefined && newRow !== undefined) {
      this.byPointId.add(flowPointId(uuid), uuid);
    } else if (oldRow !== undefined && newRow === undefined) {
      this.byPointId.remove(flowPointId(uuid), uuid);
    }
  };

  constructor(sb: TableCache, hints: StageHintIndex) {
    this.sb = sb;
    this.hints = hints;
    sb.on('change', this.onChange);
    for (const row of sb.table('Logical_Flow').values()) {
      this.byPointId.add(flowPointId(row._uuid), row._uuid);
    }
  }

  /** Stops following the caches (this directory's and its stage hints'), which may outlive it. */
  detach(): void {
    this.sb.off('change', this.onChange);
    this.hints.detach();
  }

  /** The flow behind a drop sample, preferring one of the sampled datapath. */
  find(pointId: number, datapathUuid: string | undefined): OvnLogicalFlowInfo | undefined {
    const candidates = this.byPointId.get(pointId);
    const flows = this.sb.table('Logical_Flow');
    let chosen: Row | undefined;
    for (const uuid of candidates) {
      const row = flows.get(uuid);
      if (row === undefined) {
        continue;
      }
      chosen ??= row;
      if (datapathUuid !== undefined && stringColumn(row, 'logical_datapath') === datapathUuid) {
        chosen = row;
        break;
      }
    }
    if (chosen === undefined) {
      return undefined;
    }
    const known = this.described.get(chosen._uuid);
    if (known !== undefined && known.hintVersion === this.hints.version) {
      return known.info;
    }
    const info = Object.freeze(this.describe(chosen));
    this.described.set(chosen._uuid, { hintVersion: this.hints.version, info });
    return info;
  }

  private describe(row: Row): OvnLogicalFlowInfo {
    const ids = mapColumn(row, 'external_ids');
    const stage = externalId(ids, 'stage-name');
    const source = externalId(ids, 'source');
    const hint = externalId(ids, 'stage-hint');
    return {
      uuid: row._uuid,
      ...(stage === undefined ? {} : { stage }),
      ...(source === undefined ? {} : { source }),
      pipeline: stringColumn(row, 'pipeline') ?? '',
      table: numberColumn(row, 'table_id') ?? 0,
      priority: numberColumn(row, 'priority') ?? 0,
      match: stringColumn(row, 'match') ?? '',
      actions: stringColumn(row, 'actions') ?? '',
      ...(hint === undefined ? {} : { hint: this.hints.resolve(hint) }),
    };
  }
}
