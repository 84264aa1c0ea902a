import type { TableCache } from '../ovsdb/cache';
import type { Row } from '../ovsdb/row';
import type { OvnDatapathInfo } from './event';
import { DEFAULT_NETWORK, externalId, NetworkKey, NetworkRoleKey, TopologyKey } from './external-ids';
import { mapColumn, stringColumn } from './row-values';

/**
 * Resolves a datapath tunnel key to its logical switch (or router) and Kubernetes network:
 * SB Datapath_Binding.tunnel_key -> external_ids logical-switch -> NB Logical_Switch. Answers are
 * memoized until either table changes, so a sample costs one map lookup.
 */
export class DatapathDirectory {
  private readonly nb: TableCache;
  private readonly sb: TableCache | undefined;
  private readonly resolved = new Map<number, OvnDatapathInfo>();
  private readonly hasRouters: boolean;
  private readonly forget = (table: string): void => {
    // Map.clear() allocates a fresh table even when empty, and initial syncs change every row.
    if (this.resolved.size > 0 && (table === 'Logical_Switch' || table === 'Logical_Router' || table === 'Datapath_Binding')) {
      this.resolved.clear();
    }
  };

  constructor(nb: TableCache, sb: TableCache | undefined) {
    this.nb = nb;
    this.sb = sb;
    this.hasRouters = nb.monitoredColumns().has('Logical_Router');
    nb.on('change', this.forget);
    sb?.on('change', this.forget);
  }

  /** Stops following the caches, which may outlive this directory (caches the caller owns). */
  detach(): void {
    this.nb.off('change', this.forget);
    this.sb?.off('change', this.forget);
  }

  /** The datapath row of a tunnel key, for matching a logical flow's logical_datapath. */
  binding(key: number): Row | undefined {
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

  private describe(key: number, binding: Row): OvnDatapathInfo {
    const bindingIds = mapColumn(binding, 'external_ids');
    const switchUuid = externalId(bindingIds, 'logical-switch');
    const routerUuid = externalId(bindingIds, 'logical-router');
    const bindingName = externalId(bindingIds, 'name');
    if (switchUuid !== undefined) {
      const logicalSwitch = this.nb.table('Logical_Switch').get(switchUuid);
      const switchIds = logicalSwitch === undefined ? undefined : mapColumn(logicalSwitch, 'external_ids');
      const topology = externalId(switchIds, TopologyKey);
      const role = externalId(switchIds, NetworkRoleKey);
      return {
        key,
        switch: (logicalSwitch === undefined ? undefined : stringColumn(logicalSwitch, 'name')) ?? bindingName ?? switchUuid,
        // Without the NB row the network is unknown; with it, switches lacking the key are the default network's.
        ...(logicalSwitch === undefined ? {} : { network: externalId(switchIds, NetworkKey) ?? DEFAULT_NETWORK }),
        ...(topology === undefined ? {} : { topology }),
        ...(role === undefined ? {} : { role }),
      };
    }
    if (routerUuid !== undefined) {
      const router = this.hasRouters ? this.nb.table('Logical_Router').get(routerUuid) : undefined;
      return { key, router: (router === undefined ? undefined : stringColumn(router, 'name')) ?? bindingName ?? routerUuid };
    }
    return { key };
  }
}
