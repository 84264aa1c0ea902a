import type { TableCache } from '../ovsdb/cache';
import { ModelView } from '../ovsdb/model';
import type { Tables } from './northbound.generated';

export type SamplingAppType = 'acl-new' | 'acl-est' | 'drop';

const APP_TYPES: ReadonlySet<string> = new Set<SamplingAppType>(['acl-new', 'acl-est', 'drop']);

/** What the sampling apps map reads of the northbound database. */
export const SAMPLING_APPS_READS = {
  Sampling_App: { columns: ['type', 'id'] },
} as const;

/**
 * The NB Sampling_App table as an id -> type map. The ids are configuration (ovn-kubernetes
 * writes 1, 2, 3; others choose differently), so they are read from the database, never assumed.
 */
export class SamplingApps {
  private readonly nb: ModelView<Tables, typeof SAMPLING_APPS_READS>;
  private readonly stop: () => void;
  private byId = new Map<number, SamplingAppType>();
  private dropId: number | undefined;
  private stale = true;

  constructor(nb: TableCache) {
    this.nb = new ModelView(nb, SAMPLING_APPS_READS);
    this.stop = this.nb.follow(() => {
      this.stale = true;
    });
  }

  /** Stops following the cache, which may outlive this map (a cache the caller owns). */
  detach(): void {
    this.stop();
  }

  typeOf(appId: number): SamplingAppType | undefined {
    if (this.stale) {
      this.rebuild();
    }
    return this.byId.get(appId);
  }

  /** The id of the drop app: ovn-northd samples its drop flows with it (OVN >= 24.09) when it exists. */
  get dropAppId(): number | undefined {
    if (this.stale) {
      this.rebuild();
    }
    return this.dropId;
  }

  private rebuild(): void {
    const byId = new Map<number, SamplingAppType>();
    let dropId: number | undefined;
    for (const { id, type } of this.nb.table('Sampling_App').values()) {
      if (APP_TYPES.has(type) && !byId.has(id)) {
        byId.set(id, type as SamplingAppType);
        if (type === 'drop') dropId ??= id;
      }
    }
    this.byId = byId;
    this.dropId = dropId;
    this.stale = false;
  }
}
