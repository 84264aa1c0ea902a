import { mapColumn, stringColumn } from '../ovn/row-values';
import type { LocalOvs } from './local-ovs';

export interface PsampleSupport {
  /** true: the datapath has the psample action; false: it cannot have it; undefined: OVS does not say. */
  readonly supported: boolean | undefined;
  /** The bridge's datapath type ("system" is the Linux kernel datapath). */
  readonly datapathType: string;
  readonly ovsVersion?: string;
  /** What the answer rests on and, when not supported, what to change. */
  readonly reason: string;
}

const NEEDS =
  'Local sampling needs the Linux kernel datapath with the openvswitch psample action (Linux 6.11 or newer, CONFIG_PSAMPLE) and Open vSwitch 3.4 or newer';
/** What a node without psample can do instead. */
const IPFIX_INSTEAD = 'Without it, OVS can export the same samples as IPFIX: ovn-psample collector add --ipfix 127.0.0.1:4739';

function atLeast(version: string, major: number, minor: number): boolean | undefined {
  const match = /^(\d+)\.(\d+)/.exec(version);
  if (match === null) return undefined;
  const [vMajor, vMinor] = [Number(match[1]), Number(match[2])];
  return vMajor > major || (vMajor === major && vMinor >= minor);
}

/**
 * Whether `bridge`'s datapath can emit psample samples, from what ovs-vswitchd probed and wrote
 * to Datapath.capabilities:psample (the Datapath row of the bridge's type, which ovn-controller
 * creates on OVN nodes).
 */
export function psampleSupport(ovs: LocalOvs, bridgeName: string): PsampleSupport {
  const bridge = ovs.bridge(bridgeName);
  const datapathType = (bridge === undefined ? undefined : stringColumn(bridge, 'datapath_type')) || 'system';
  const root = ovs.root();
  const ovsVersion = root === undefined ? undefined : stringColumn(root, 'ovs_version');
  const base = { datapathType, ...(ovsVersion === undefined ? {} : { ovsVersion }) };
  if (!ovs.cache.schema.tables.get('Flow_Sample_Collector_Set')?.columns.has('local_group_id')) {
    return {
      ...base,
      supported: false,
      reason: `The OVS database (schema ${ovs.cache.schema.version}) has no Flow_Sample_Collector_Set.local_group_id: Open vSwitch is older than 3.4, without local sampling. ${NEEDS}. ${IPFIX_INSTEAD}.`,
    };
  }
  if (datapathType !== 'system') {
    return {
      ...base,
      supported: false,
      reason: `Bridge ${bridgeName} uses the ${datapathType} datapath, which has no psample action. ${NEEDS}. ${IPFIX_INSTEAD}.`,
    };
  }
  if (ovsVersion !== undefined && atLeast(ovsVersion, 3, 4) === false) {
    return {
      ...base,
      supported: false,
      reason: `Open vSwitch ${ovsVersion} has no local sampling. ${NEEDS}: upgrade OVS. ${IPFIX_INSTEAD}.`,
    };
  }
  const datapathUuid = root === undefined ? undefined : mapColumn(root, 'datapaths').get(datapathType);
  const datapath = typeof datapathUuid === 'string' ? ovs.cache.table('Datapath').get(datapathUuid) : undefined;
  if (datapath === undefined) {
    return {
      ...base,
      supported: undefined,
      reason: `The OVS database has no Datapath row for "${datapathType}" (ovn-controller creates it), so ovs-vswitchd's probe of the psample action cannot be read. ${NEEDS}.`,
    };
  }
  const capability = mapColumn(datapath, 'capabilities').get('psample');
  if (capability === 'true') {
    return { ...base, supported: true, reason: `ovs-vswitchd found the psample action in the ${datapathType} datapath.` };
  }
  if (capability === 'false') {
    return {
      ...base,
      supported: false,
      reason: `ovs-vswitchd probed the ${datapathType} datapath and found no psample action: the kernel's openvswitch module is older than Linux 6.11 or built without CONFIG_PSAMPLE. ${NEEDS}. ${IPFIX_INSTEAD}.`,
    };
  }
  return {
    ...base,
    supported: undefined,
    reason: `ovs-vswitchd has not reported a psample capability for the ${datapathType} datapath (yet). ${NEEDS}.`,
  };
}
