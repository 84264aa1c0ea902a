import type { TableCache } from '../ovsdb/cache';
import type { OvnStageHint } from './event';
import { HINT_TABLES } from './selection';
import { stringColumn } from './row-values';

/** ovn-northd's stage-hint: the first 32 bits of a northbound row's UUID, as 8 hex digits. */
export function stageHintOf(uuid: string): string {
  return uuid.slice(0, 8).toLowerCase();
}

/** Finds the northbound row a logical flow's stage-hint names, across the tables that carry names. */
export class StageHintIndex {
  private readonly nb: TableCache;
  private readonly rows = new Map<string, Map<string, string>>();
  private changes = 0;

  constructor(nb: TableCache) {
    this.nb = nb;
    const tables = new Set(HINT_TABLES.filter((table) => nb.monitoredColumns().has(table)));
    nb.on('change', (table, uuid, oldRow, newRow) => {
      if (!tables.has(table)) {
        return;
      }
      this.changes++;
      if (oldRow === undefined && newRow !== undefined) {
        this.add(stageHintOf(uuid), uuid, table);
      } else if (oldRow !== undefined && newRow === undefined) {
        this.remove(stageHintOf(uuid), uuid);
      }
    });
    for (const table of tables) {
      for (const row of nb.table(table).values()) {
        this.add(stageHintOf(row._uuid), row._uuid, table);
      }
    }
  }

  /** Grows with every change of a named row, so answers derived from resolve() know when to expire. */
  get version(): number {
    return this.changes;
  }

  /** The named row, or just the hint when no monitored row has that UUID prefix. */
  resolve(hint: string): OvnStageHint {
    const candidates = this.rows.get(hint.toLowerCase());
    const first = candidates?.entries().next();
    if (first === undefined || first.done === true) {
      return { hint };
    }
    const [uuid, table] = first.value;
    const row = this.nb.table(table).get(uuid);
    const name = row === undefined ? undefined : stringColumn(row, 'name');
    return name === undefined || name === '' ? { hint, table, uuid } : { hint, table, uuid, name };
  }

  private add(hint: string, uuid: string, table: string): void {
    let candidates = this.rows.get(hint);
    if (candidates === undefined) {
      candidates = new Map();
      this.rows.set(hint, candidates);
    }
    candidates.set(uuid, table);
  }

  private remove(hint: string, uuid: string): void {
    const candidates = this.rows.get(hint);
    candidates?.delete(uuid);
    if (candidates?.size === 0) {
      this.rows.delete(hint);
    }
  }
}
