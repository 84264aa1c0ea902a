import type { Logger } from 'pino';
import type { LocalOvs } from '../ovs/local-ovs';
import { psampleSupport } from '../ovs/psample-support';
import type { SampleSourceKind } from './options';

/**
 * The source `--source` names, `auto` decided from the bridge's datapath: IPFIX only where the
 * datapath cannot emit psample samples (Datapath.capabilities, OVS < 3.4, a userspace datapath),
 * psample where it can or where that is not known, so that a psample node never exports every
 * sample twice unasked.
 */
export function chooseSource(kind: SampleSourceKind, ovs: LocalOvs, bridge: string, log: Logger): 'psample' | 'ipfix' {
  if (kind !== 'auto') return kind;
  const support = psampleSupport(ovs, bridge);
  const chosen = support.supported === false ? 'ipfix' : 'psample';
  log.info(
    { source: chosen, datapath: support.datapathType, psample: support.supported },
    `--source auto: reading ${chosen}. ${support.reason}`,
  );
  return chosen;
}
