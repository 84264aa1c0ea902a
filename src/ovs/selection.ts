import type { CacheSelection } from '../ovsdb/cache';
import type { DatabaseSchema } from '../ovsdb/schema';
import { OvsSchemaUnsupportedError } from './errors';

export const OPEN_VSWITCH_DATABASE = 'Open_vSwitch';

/** The tables and columns of the local OVS database that the collector, its watch and interface names read. */
const COLUMNS: Readonly<Record<string, readonly string[]>> = {
  Open_vSwitch: ['datapaths', 'ovs_version'],
  Bridge: ['name', 'datapath_type'],
  Datapath: ['capabilities'],
  Flow_Sample_Collector_Set: ['id', 'bridge', 'local_group_id', 'ipfix', 'external_ids'],
  Interface: ['name', 'ifindex', 'external_ids'],
  IPFIX: ['targets', 'external_ids'],
};
/** Columns of OVS 3.4 and newer: an older schema (IPFIX-only nodes) is read without them. */
const NEWER: Readonly<Record<string, readonly string[]>> = { Flow_Sample_Collector_Set: ['local_group_id'] };

export function vswitchSelection(schema: DatabaseSchema): CacheSelection {
  const missing: string[] = [];
  for (const [table, columns] of Object.entries(COLUMNS)) {
    const found = schema.tables.get(table);
    if (found === undefined) missing.push(table);
    else
      missing.push(
        ...columns.filter((column) => !found.columns.has(column) && !NEWER[table]?.includes(column)).map((column) => `${table}.${column}`),
      );
  }
  if (missing.length > 0) {
    throw new OvsSchemaUnsupportedError(
      `The OVS database schema ${schema.version} lacks ${missing.join(', ')}, which ovn-psample reads: upgrade OVS, or point --db at the node's ovsdb-server.`,
    );
  }
  const present = (table: string): readonly string[] => COLUMNS[table]!.filter((column) => schema.tables.get(table)!.columns.has(column));
  return {
    Open_vSwitch: { columns: COLUMNS.Open_vSwitch! },
    Bridge: { columns: COLUMNS.Bridge!, indexes: ['name'] },
    Datapath: { columns: COLUMNS.Datapath! },
    Flow_Sample_Collector_Set: { columns: present('Flow_Sample_Collector_Set'), indexes: ['id'] },
    Interface: { columns: COLUMNS.Interface!, indexes: ['ifindex'] },
    IPFIX: { columns: COLUMNS.IPFIX! },
  };
}
