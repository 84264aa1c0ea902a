import type { TableCache } from '../ovsdb/cache';
import type { Row } from '../ovsdb/row';
import { stageHintOf } from './cookie';
import type { OvnStageHint } from './event';
import { stringColumn } from './row-values';
import { HINT_TABLES } from './selection';
import { UuidBuckets } from './uuid-buckets';

/** Finds the northbound row a logical flow's stage-hint names, across the tables that carry names. */
export class StageHintIndex {
  private readonly nb: TableCache;
  private readonly tables: readonly string[];
  private readonly byHint = new Map<string, UuidBuckets<string>>();
  private changes = 0;
  private readonly onChange = (table: string, uuid: string, oldRow: Row | undefined, newRow: Row | undefined): void => {
    const buckets = this.byHint.get(table);
    if (buckets === undefined) {
      return;
    }
    this.changes++;
    if (oldRow === undefined && newRow !== undefined) {
      buckets.add(stageHintOf(uuid), uuid);
    } else if (oldRow !== undefined && newRow === undefined) {
      buckets.remove(stageHintOf(uuid), uuid);
    }
  };

  constructor(nb: TableCache) {
    this.nb = nb;
    this.tables = HINT_TABLES.filter((table) => nb.monitoredColumns().has(table));
    for (const table of this.tables) {
      const buckets = new UuidBuckets<string>();
      this.byHint.set(table, buckets);
      for (const row of nb.table(table).values()) {
        buckets.add(stageHintOf(row._uuid), row._uuid);
      }
    }
    nb.on('change', this.onChange);
  }

  /** Stops following the cache, which may outlive this index (a cache the caller owns). */
  detach(): void {
    this.nb.off('change', this.onChange);
  }

  /** Grows with every change of a named row, so answers derived from resolve() know when to expire. */
  get version(): number {
    return this.changes;
  }

  /** The named row, or just the hint when no monitored row has that UUID prefix. */
  resolve(hint: string): OvnStageHint {
    const key = hint.toLowerCase();
    for (const table of this.tables) {
      const uuid = this.byHint.get(table)?.get(key)[0];
      if (uuid === undefined) {
        continue;
      }
      const row = this.nb.table(table).get(uuid);
      const name = row === undefined ? undefined : stringColumn(row, 'name');
      return name === undefined || name === '' ? { hint, table, uuid } : { hint, table, uuid, name };
    }
    return { hint };
  }
}
