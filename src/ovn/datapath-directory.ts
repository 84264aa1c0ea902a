import type { TableCache } from '../ovsdb/cache';
import { ModelView, type ReadRow } from '../ovsdb/model';
import type { OvnDatapathInfo } from './event';
import { DEFAULT_NETWORK, externalId, NetworkKey, NetworkRoleKey, TopologyKey } from './external-ids';
import type { Tables as NorthboundTables } from './northbound.generated';
import type { Tables as SouthboundTables } from './southbound.generated';

/** What naming a datapath reads of the northbound database: its switch or router. */
export const DATAPATH_NB_READS = {
  Logical_Switch: { columns: ['name', 'external_ids'] },
  Logical_Router: { columns: ['name'] },
} as const;

/** What it reads of the southbound database: the binding of each tunnel key. */
export const DATAPATH_SB_READS = {
  Datapath_Binding: { columns: ['tunnel_key', 'external_ids'], indexes: ['tunnel_key'] },
} as const;

type Binding = ReadRow<SouthboundTables, typeof DATAPATH_SB_READS, 'Datapath_Binding'>;

/**
 * Resolves a datapath tunnel key to its logical switch (or router) and Kubernetes network:
 * SB Datapath_Binding.tunnel_key -> external_ids logical-switch -> NB Logical_Switch. Answers are
 * memoized until either database's tables change, so a sample costs one map lookup.
 */
export class DatapathDirectory {
  private readonly nb: ModelView<NorthboundTables, typeof DATAPATH_NB_READS>;
  private readonly sb: ModelView<SouthboundTables, typeof DATAPATH_SB_READS> | undefined;
  private readonly resolved = new Map<number, OvnDatapathInfo>();
  private readonly stops: (() => void)[];

  constructor(nb: TableCache, sb: TableCache | undefined) {
    this.nb = new ModelView(nb, DATAPATH_NB_READS);
    this.sb = sb === undefined ? undefined : new ModelView(sb, DATAPATH_SB_READS);
    const forget = (): void => {
      // Map.clear() allocates a fresh table even when empty, and initial syncs change every row.
      if (this.resolved.size > 0) this.resolved.clear();
    };
    this.stops = [this.nb.follow(forget), ...(this.sb === undefined ? [] : [this.sb.follow(forget)])];
  }

  /** Stops following the caches, which may outlive this directory (caches the caller owns). */
  detach(): void {
    for (const stop of this.stops) stop();
  }

  /** The datapath row of a tunnel key, for matching a logical flow's logical_datapath. */
  binding(key: number): Binding | undefined {
    return this.sb?.table('Datapath_Binding').lookup('tunnel_key', key)[0];
  }

  /** What is known about the datapath; unresolved keys come back as just { key } and are not memoized. */
  resolve(key: number): OvnDatapathInfo {
    const known = this.resolved.get(key);
    if (known !== undefined) {
      return known;
    }
    const binding = this.binding(key);
    if (binding === undefined) {
      return { key };
    }
    const info = Object.freeze(this.describe(key, binding));
    this.resolved.set(key, info);
    return info;
  }

  private describe(key: number, binding: Binding): OvnDatapathInfo {
    const bindingIds = binding.external_ids;
    const switchUuid = externalId(bindingIds, 'logical-switch');
    const routerUuid = externalId(bindingIds, 'logical-router');
    const bindingName = externalId(bindingIds, 'name');
    if (switchUuid !== undefined) {
      const logicalSwitch = this.nb.table('Logical_Switch').get(switchUuid);
      const switchIds = logicalSwitch?.external_ids;
      const topology = externalId(switchIds, TopologyKey);
      const role = externalId(switchIds, NetworkRoleKey);
      return {
        key,
        switch: logicalSwitch?.name ?? bindingName ?? switchUuid,
        // Without the NB row the network is unknown; with it, switches lacking the key are the default network's.
        ...(logicalSwitch === undefined ? {} : { network: externalId(switchIds, NetworkKey) ?? DEFAULT_NETWORK }),
        ...(topology === undefined ? {} : { topology }),
        ...(role === undefined ? {} : { role }),
      };
    }
    if (routerUuid !== undefined) {
      return { key, router: this.nb.table('Logical_Router').get(routerUuid)?.name ?? bindingName ?? routerUuid };
    }
    return { key };
  }
}
