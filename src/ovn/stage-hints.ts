import type { TableCache } from '../ovsdb/cache';
import { ModelView } from '../ovsdb/model';
import { stageHintOf } from './cookie';
import type { OvnStageHint } from './event';
import type { Tables } from './northbound.generated';
import { UuidBuckets } from './uuid-buckets';

/** Northbound tables whose rows a logical flow's stage-hint may name, read by their "name" column. */
export const STAGE_HINT_READS = {
  ACL: { columns: ['name'] },
  Logical_Switch: { columns: ['name'] },
  Logical_Switch_Port: { columns: ['name'] },
  Logical_Router: { columns: ['name'] },
  Logical_Router_Port: { columns: ['name'] },
  Port_Group: { columns: ['name'] },
} as const;

type HintTable = keyof typeof STAGE_HINT_READS;

/** In the order a hint is looked for: a hint matching rows of two tables names the first one's. */
const HINT_TABLES = Object.keys(STAGE_HINT_READS) as HintTable[];

/** Finds the northbound row a logical flow's stage-hint names, across the tables that carry names. */
export class StageHintIndex {
  private readonly nb: ModelView<Tables, typeof STAGE_HINT_READS>;
  private readonly stop: () => void;
  private readonly byHint = new Map<HintTable, UuidBuckets<string>>();
  private changes = 0;

  constructor(nb: TableCache) {
    this.nb = new ModelView(nb, STAGE_HINT_READS);
    for (const table of HINT_TABLES) {
      const buckets = new UuidBuckets<string>();
      this.byHint.set(table, buckets);
      for (const row of this.nb.table(table).values()) {
        buckets.add(stageHintOf(row._uuid), row._uuid);
      }
    }
    this.stop = this.nb.follow((table, uuid, oldRow, newRow) => {
      this.changes++;
      const buckets = this.byHint.get(table)!;
      if (oldRow === undefined && newRow !== undefined) {
        buckets.add(stageHintOf(uuid), uuid);
      } else if (oldRow !== undefined && newRow === undefined) {
        buckets.remove(stageHintOf(uuid), uuid);
      }
    });
  }

  /** Stops following the cache, which may outlive this index (a cache the caller owns). */
  detach(): void {
    this.stop();
  }

  /** Grows with every change of a named row, so answers derived from resolve() know when to expire. */
  get version(): number {
    return this.changes;
  }

  /** The named row, or just the hint when no row of these tables has that UUID prefix. */
  resolve(hint: string): OvnStageHint {
    const key = hint.toLowerCase();
    for (const table of HINT_TABLES) {
      const uuid = this.byHint.get(table)?.get(key)[0];
      if (uuid === undefined) {
        continue;
      }
      const name = this.nb.table(table).get(uuid)?.name;
      return name === undefined || name === '' ? { hint, table, uuid } : { hint, table, uuid, name };
    }
    return { hint };
  }
}
