import type { OvnOpenFlowTableInfo } from './event';

interface TableMeaning {
  readonly name: string;
  readonly description: string;
}

const PHY_TO_LOG: TableMeaning = {
  name: 'OFTABLE_PHY_TO_LOG',
  description: 'the packet came in on a port or tunnel that no logical port on this chassis is bound to',
};
const LOCAL_OUTPUT: TableMeaning = {
  name: 'OFTABLE_LOCAL_OUTPUT',
  description: 'its logical output port is not on this chassis',
};
const CHECK_LOOPBACK: TableMeaning = {
  name: 'OFTABLE_CHECK_LOOPBACK',
  description: 'it would leave through the logical port it came in on (or from a localport through a localnet port)',
};
const LOG_TO_PHY: TableMeaning = {
  name: 'OFTABLE_LOG_TO_PHY',
  description: 'its logical output port has no physical port on this chassis',
};

/**
 * The OpenFlow tables in which ovn-controller drops packets itself (put_drop() in
 * controller/physical.c, numbered in controller/lflow.h), per OVN release: read in ovn-org/ovn at
 * v24.09.0, v25.03.0 and v25.09.0. The numbers move between releases (25.09 put
 * OFTABLE_REMOTE_VTEP_OUTPUT at 44), so a table is named only for a release listed here.
 */
const DROP_TABLES: Readonly<Record<string, ReadonlyMap<number, TableMeaning>>> = {
  '24.09': new Map([
    [0, PHY_TO_LOG],
    [43, LOCAL_OUTPUT],
    [44, CHECK_LOOPBACK],
    [65, LOG_TO_PHY],
  ]),
  '25.03': new Map([
    [0, PHY_TO_LOG],
    [43, LOCAL_OUTPUT],
    [44, CHECK_LOOPBACK],
    [65, LOG_TO_PHY],
  ]),
  '25.09': new Map([
    [0, PHY_TO_LOG],
    [45, LOCAL_OUTPUT],
    [46, CHECK_LOOPBACK],
    [65, LOG_TO_PHY],
  ]),
};

/** The table an ovn-controller drop sample names (its obs_point_id), named when `release` is one whose tables are known. */
export function controllerDropTable(table: number, release: string | undefined): OvnOpenFlowTableInfo {
  const meaning = release === undefined ? undefined : DROP_TABLES[release]?.get(table);
  return {
    table,
    ...(release === undefined ? {} : { release }),
    ...(meaning === undefined ? {} : { name: meaning.name, description: meaning.description }),
  };
}

/** ovn-controller's drop, in words: the table, and its name and why it drops where the release is known. */
export function controllerDropMessage(info: OvnOpenFlowTableInfo): string {
  if (info.name !== undefined) {
    return `Dropped by ovn-controller in OpenFlow table ${info.table} (${info.name}: ${info.description ?? ''})`;
  }
  const why =
    info.release === undefined
      ? 'the OVN release is unknown (no northd_internal_version in NB_Global or SB_Global options)'
      : DROP_TABLES[info.release] === undefined
        ? `the tables of OVN ${info.release} are not known to this version of ovn-psample`
        : `OVN ${info.release}'s ovn-controller drops in no table of that number`;
  return `Dropped by ovn-controller in OpenFlow table ${info.table} (not named: ${why})`;
}
