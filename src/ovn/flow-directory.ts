import { performance } from 'node:perf_hooks';
import type { TableCache } from '../ovsdb/cache';
import type { Row } from '../ovsdb/row';
import { flowPointId } from './cookie';
import type { OvnLogicalFlowInfo } from './event';
import { externalId } from './external-ids';
import { mapColumn, numberColumn, stringColumn } from './row-values';
import type { StageHintIndex } from './stage-hints';
import { UuidBuckets } from './uuid-buckets';

/** A logical flow's match and actions: the bulk of a Logical_Flow row, read only for flows that drop samples name. */
export interface LogicalFlowText {
  readonly match: string;
  readonly actions: string;
}

/** Reads one flow's match and actions from the southbound database (undefined: the flow is gone). */
export type LogicalFlowTextSource = (uuid: string) => Promise<LogicalFlowText | undefined>;

/** Flows whose text is kept: drop samples name few flows, again and again. */
const MAX_TEXTS = 4096;
/** A read that failed is not tried again for this long: drop samples can come thousands a second. */
const RETRY_READ_MS = 5000;

/**
 * SB logical flows keyed by the point id their drop samples carry. Several flows can share the
 * 32-bit prefix, so the datapath the sample came from breaks ties.
 *
 * The mirror holds no match or actions (half a Logical_Flow row's memory, for 100,000 flows of
 * which a node's drop samples name a handful): they are read by UUID the first time a sample
 * names the flow, and kept while the flow lives (ovn-northd never rewrites them in place: a
 * changed match or action is a new row). A cache built with match and actions serves them directly.
 */
export class LogicalFlowDirectory {
  private readonly sb: TableCache;
  private readonly hints: StageHintIndex;
  private readonly fetchText: LogicalFlowTextSource | undefined;
  private readonly byPointId = new UuidBuckets<number>();
  private readonly described = new Map<string, { readonly hintVersion: number; readonly info: OvnLogicalFlowInfo }>();
  /** Insertion order is age: the oldest is dropped past MAX_TEXTS. */
  private readonly texts = new Map<string, LogicalFlowText>();
  private readonly reading = new Map<string, Promise<void>>();
  /** When the last read of a flow's text failed, on the monotonic clock. */
  private readonly failedReads = new Map<string, number>();

  private readonly onChange = (table: string, uuid: string, oldRow: Row | undefined, newRow: Row | undefined): void => {
    if (table !== 'Logical_Flow') {
      return;
    }
    this.described.delete(uuid);
    if (oldRow === undefined && newRow !== undefined) {
      this.byPointId.add(flowPointId(uuid), uuid);
    } else if (oldRow !== undefined && newRow === undefined) {
      this.byPointId.remove(flowPointId(uuid), uuid);
      this.texts.delete(uuid);
      this.failedReads.delete(uuid);
    }
  };

  constructor(sb: TableCache, hints: StageHintIndex, fetchText?: LogicalFlowTextSource) {
    this.sb = sb;
    this.hints = hints;
    this.fetchText = fetchText;
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

  /**
   * The flow behind a drop sample, preferring one of the sampled datapath. Its match and actions
   * are there once read: the first call for a flow starts reading them (see textOf()).
   */
  find(pointId: number, datapathUuid: string | undefined): OvnLogicalFlowInfo | undefined {
    const chosen = this.choose(pointId, datapathUuid);
    if (chosen === undefined) {
      return undefined;
    }
    const known = this.described.get(chosen._uuid);
    if (known !== undefined && known.hintVersion === this.hints.version) {
      return known.info;
    }
    const text = this.rowText(chosen) ?? this.texts.get(chosen._uuid);
    if (text === undefined) {
      void this.textOf(chosen._uuid);
    }
    const info = Object.freeze(this.describe(chosen, text));
    if (text !== undefined) {
      this.described.set(chosen._uuid, { hintVersion: this.hints.version, info });
    }
    return info;
  }

  /** Resolves once the match and actions of the flow a drop sample names are here (or cannot be had). */
  async prepare(pointId: number, datapathUuid: string | undefined): Promise<void> {
    const chosen = this.choose(pointId, datapathUuid);
    if (chosen !== undefined && this.rowText(chosen) === undefined) {
      await this.textOf(chosen._uuid);
    }
  }

  private choose(pointId: number, datapathUuid: string | undefined): Row | undefined {
    const flows = this.sb.table('Logical_Flow');
    let chosen: Row | undefined;
    for (const uuid of this.byPointId.get(pointId)) {
      const row = flows.get(uuid);
      if (row === undefined) {
        continue;
      }
      chosen ??= row;
      if (datapathUuid !== undefined && stringColumn(row, 'logical_datapath') === datapathUuid) {
        return row;
      }
    }
    return chosen;
  }

  /** The text a cache built with match and actions (an older selection) holds in the row. */
  private rowText(row: Row): LogicalFlowText | undefined {
    const match = stringColumn(row, 'match');
    const actions = stringColumn(row, 'actions');
    return match === undefined || actions === undefined ? undefined : { match, actions };
  }

  /** Reads a flow's text, one read at a time; a failed read is tried again after RETRY_READ_MS. */
  private textOf(uuid: string): Promise<void> {
    const { fetchText } = this;
    const failedAt = this.failedReads.get(uuid);
    if (fetchText === undefined || this.texts.has(uuid) || (failedAt !== undefined && performance.now() - failedAt < RETRY_READ_MS)) {
      return Promise.resolve();
    }
    let reading = this.reading.get(uuid);
    if (reading === undefined) {
      reading = fetchText(uuid)
        .then(
          (text) => {
            if (text === undefined) {
              this.failedReads.set(uuid, performance.now());
            } else if (this.sb.table('Logical_Flow').get(uuid) !== undefined) {
              if (this.texts.size >= MAX_TEXTS) {
                this.texts.delete(this.texts.keys().next().value!);
              }
              this.texts.set(uuid, text);
              this.failedReads.delete(uuid);
              this.described.delete(uuid);
            }
          },
          () => void this.failedReads.set(uuid, performance.now()),
        )
        .finally(() => this.reading.delete(uuid));
      this.reading.set(uuid, reading);
    }
    return reading;
  }

  private describe(row: Row, text: LogicalFlowText | undefined): OvnLogicalFlowInfo {
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
      ...(text === undefined ? {} : { match: text.match, actions: text.actions }),
      ...(hint === undefined ? {} : { hint: this.hints.resolve(hint) }),
    };
  }
}
