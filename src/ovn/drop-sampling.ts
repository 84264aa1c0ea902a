import type { TableCache } from '../ovsdb/cache';
import { ModelView } from '../ovsdb/model';
import type { Tables as NorthboundTables } from './northbound.generated';
import type { Tables as SouthboundTables } from './southbound.generated';

/** ovn-northd reads its drop sampling settings from NB_Global options (northd/debug.c init_debug_config). */
export const DROP_SAMPLING_NB_READS = {
  NB_Global: { columns: ['options'] },
} as const;

/** ovn-controller reads them from SB_Global options, where ovn-northd copies NB_Global's (northd/en-global-config.c). */
export const DROP_SAMPLING_SB_READS = {
  SB_Global: { columns: ['options'] },
} as const;

/** One daemon's drop sampling settings: on when a collector set is named; samples carry `domain` in obs_domain_id's top 8 bits. */
export interface DropSamplingSettings {
  readonly collectorSet: number;
  readonly domain: number;
}

/** OVS's smap_get_uint(): a decimal unsigned integer, or 0 for anything else. */
function optionUint(options: ReadonlyMap<string, string> | undefined, key: string): number {
  const text = options?.get(key);
  return text !== undefined && /^\d{1,10}$/.test(text) ? Number(text) : 0;
}

/**
 * The drop sampling settings of ovn-northd and ovn-controller, and the OVN release that wrote
 * them, read from NB_Global and SB_Global options as the daemons read them: northd its own
 * NB_Global's, ovn-controller SB_Global's (NB_Global's when there is no southbound database to read).
 */
export class DropSampling {
  private readonly nb: ModelView<NorthboundTables, typeof DROP_SAMPLING_NB_READS>;
  private readonly sb: ModelView<SouthboundTables, typeof DROP_SAMPLING_SB_READS> | undefined;

  constructor(nb: TableCache, sb: TableCache | undefined) {
    this.nb = new ModelView(nb, DROP_SAMPLING_NB_READS);
    this.sb = sb === undefined ? undefined : new ModelView(sb, DROP_SAMPLING_SB_READS);
  }

  /**
   * NB_Global options:debug_drop_collector_set and debug_drop_domain_id: northd's domain for its
   * drop flows when there is no Sampling_App of type drop.
   */
  northd(): DropSamplingSettings {
    const options = this.nbOptions();
    return { collectorSet: optionUint(options, 'debug_drop_collector_set'), domain: optionUint(options, 'debug_drop_domain_id') };
  }

  /**
   * ovn-controller's settings for the drops of its own OpenFlow tables: it shifts the domain left
   * by 24 bits into a 32-bit obs_domain_id, so only its low 8 bits survive.
   */
  controller(): DropSamplingSettings {
    const options = this.sbOptions() ?? this.nbOptions();
    return {
      collectorSet: optionUint(options, 'debug_drop_collector_set'),
      domain: optionUint(options, 'debug_drop_domain_id') & 0xff,
    };
  }

  /** The OVN release ("25.03") of the ovn-northd that wrote options:northd_internal_version, if any did. */
  release(): string | undefined {
    const version = this.sbOptions()?.get('northd_internal_version') ?? this.nbOptions()?.get('northd_internal_version');
    return version === undefined ? undefined : /^(\d+\.\d+)\./.exec(version)?.[1];
  }

  /** The options of the one NB_Global row. */
  private nbOptions(): ReadonlyMap<string, string> | undefined {
    for (const row of this.nb.table('NB_Global').values()) return row.options;
    return undefined;
  }

  /** The options of the one SB_Global row. */
  private sbOptions(): ReadonlyMap<string, string> | undefined {
    for (const row of this.sb?.table('SB_Global').values() ?? []) return row.options;
    return undefined;
  }
}
