import { performance } from 'node:perf_hooks';
import type { TableCache } from '../ovsdb/cache';
import { ModelView, type ReadRow } from '../ovsdb/model';
import { flowPointId } from './cookie';
import type { OvnLogicalFlowInfo } from './event';
import { externalId } from './external-ids';
import type { Tables } from './southbound.generated';
import type { StageHintIndex } from './stage-hints';
import { UuidBuckets } from './uuid-buckets';

/**
 * What the flow directory reads of the southbound database: no match or actions (read on demand,
 * see LogicalFlowDirectory). A node's flows point at a few datapaths, and most share their
 * {stage-name, source} and description with many others.
 */
export const LOGICAL_FLOW_READS = {
  Logical_Flow: {
    columns: ['logical_datapath', 'pipeline', 'table_id', 'priority', 'external_ids', 'flow_desc'],
    shared: ['logical_datapath', 'external_ids', 'flow_desc'],
  },
} as const;

/** A flow's text, which a cache the caller built may hold. */
const LOGICAL_FLOW_TEXT_READS = {
  Logical_Flow: { columns: ['match', 'actions'] },
} as const;

type Flow = ReadRow<Tables, typeof LOGICAL_FLOW_READS, 'Logical_Flow'>;

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
  private readonly sb: ModelView<Tables, typeof LOGICAL_FLOW_READS>;
  /** When the cache holds match and actions too. */
  private readonly withText: ModelView<Tables, typeof LOGICAL_FLOW_TEXT_READS> | undefined;
  private readonly stop: () => void;
  private readonly hints: StageHintIndex;
  private readonly fetchText: LogicalFlowTextSource | undefined;
  private readonly byPointId = new UuidBuckets<number>();
  private readonly described = new Map<string, { readonly hintVersion: number; readonly info: OvnLogicalFlowInfo }>();
  /** Insertion order is age: the oldest is dropped past MAX_TEXTS. */
  private readonly texts = new Map<string, LogicalFlowText>();
  private readonly reading = new Map<string, Promise<void>>();
  /** When the last read of a flow's text failed, on the monotonic clock. */
  private readonly failedReads = new Map<string, number>();

  constructor(sb: TableCache, hints: StageHintIndex, fetchText?: LogicalFlowTextSource) {
    this.sb = new ModelView(sb, LOGICAL_FLOW_READS);
    const selected = sb.monitoredColumns().get('Logical_Flow') ?? [];
    this.withText = LOGICAL_FLOW_TEXT_READS.Logical_Flow.columns.every((column) => selected.includes(column))
      ? new ModelView(sb, LOGICAL_FLOW_TEXT_READS)
      : undefined;
    this.hints = hints;
    this.fetchText = fetchText;
    for (const row of this.sb.table('Logical_Flow').values()) {
      this.byPointId.add(flowPointId(row._uuid), row._uuid);
    }
    this.stop = this.sb.follow((_table, uuid, oldRow, newRow) => {
      this.described.delete(uuid);
      if (oldRow === undefined && newRow !== undefined) {
        this.byPointId.add(flowPointId(uuid), uuid);
      } else if (oldRow !== undefined && newRow === undefined) {
        this.byPointId.remove(flowPointId(uuid), uuid);
        this.texts.delete(uuid);
        this.failedReads.delete(uuid);
      }
    });
  }

  /** Stops following the caches (this directory's and its stage hints'), which may outlive it. */
  detach(): void {
    this.stop();
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

  private choose(pointId: number, datapathUuid: string | undefined): Flow | undefined {
    const flows = this.sb.table('Logical_Flow');
    let chosen: Flow | undefined;
    for (const uuid of this.byPointId.get(pointId)) {
      const row = flows.get(uuid);
      if (row === undefined) {
        continue;
      }
      chosen ??= row;
      if (datapathUuid !== undefined && row.logical_datapath === datapathUuid) {
        return row;
      }
    }
    return chosen;
  }

  /** The text a cache built with match and actions (an older selection) holds in the row. */
  private rowText(row: Flow): LogicalFlowText | undefined {
    const withText = this.withText?.table('Logical_Flow').get(row._uuid);
    return withText === undefined ? undefined : { match: withText.match, actions: withText.actions };
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

  private describe(row: Flow, text: LogicalFlowText | undefined): OvnLogicalFlowInfo {
    const ids = row.external_ids;
    const stage = externalId(ids, 'stage-name');
    const source = externalId(ids, 'source');
    const hint = externalId(ids, 'stage-hint');
    return {
      uuid: row._uuid,
      ...(stage === undefined ? {} : { stage }),
      ...(source === undefined ? {} : { source }),
      pipeline: row.pipeline,
      table: row.table_id,
      priority: row.priority,
      ...(text === undefined ? {} : { match: text.match, actions: text.actions }),
      ...(hint === undefined ? {} : { hint: this.hints.resolve(hint) }),
      ...(row.flow_desc === undefined ? {} : { description: row.flow_desc }),
    };
  }
}
