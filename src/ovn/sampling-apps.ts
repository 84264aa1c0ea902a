import type { TableCache } from '../ovsdb/cache';
import { numberColumn, stringColumn } from './row-values';

export type SamplingAppType = 'acl-new' | 'acl-est' | 'drop';

const APP_TYPES: ReadonlySet<string> = new Set<SamplingAppType>(['acl-new', 'acl-est', 'drop']);

/**
 * The NB Sampling_App table as an id -> type map. The ids are configuration (ovn-kubernetes
 * writes 1, 2, 3; others choose differently), so they are read from the database, never assumed.
 */
export class SamplingApps {
  private readonly nb: TableCache;
  private byId = new Map<number, SamplingAppType>();
  private stale = true;
  private readonly onChange = (table: string): void => {
    if (table === 'Sampling_App') {
      this.stale = true;
    }
  };

  constructor(nb: TableCache) {
    this.nb = nb;
    nb.on('change', this.onChange);
  }

  /** Stops following the cache, which may outlive this map (a cache the caller owns). */
  detach(): void {
    this.nb.off('change', this.onChange);
  }

  typeOf(appId: number): SamplingAppType | undefined {
    if (this.stale) {
      this.rebuild();
    }
    return this.byId.get(appId);
  }

  private rebuild(): void {
    const byId = new Map<number, SamplingAppType>();
    for (const row of this.nb.table('Sampling_App').values()) {
      const id = numberColumn(row, 'id');
      const type = stringColumn(row, 'type');
      if (id !== undefined && type !== undefined && APP_TYPES.has(type) && !byId.has(id)) {
        byId.set(id, type as SamplingAppType);
      }
    }
    this.byId = byId;
    this.stale = false;
  }
}
