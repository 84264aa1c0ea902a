import { OvnSchemaUnsupportedError } from '../errors';
import type { CacheSelection, TableCache } from '../ovsdb/cache';
import type { DatabaseSchema } from '../ovsdb/schema';

export const NORTHBOUND_DATABASE = 'OVN_Northbound';
export const SOUTHBOUND_DATABASE = 'OVN_Southbound';

/** Northbound tables whose rows a logical flow's stage-hint may name (by their "name" column). */
export const HINT_TABLES: readonly string[] = [
  'ACL',
  'Logical_Switch',
  'Logical_Switch_Port',
  'Logical_Router',
  'Logical_Router_Port',
  'Port_Group',
];

const ACL_COLUMNS = ['name', 'priority', 'direction', 'match', 'action', 'label', 'tier', 'sample_new', 'sample_est', 'external_ids'];
/** No match or actions: LogicalFlowDirectory reads them for the few flows drop samples name. */
const LOGICAL_FLOW_COLUMNS = ['logical_datapath', 'pipeline', 'table_id', 'priority', 'external_ids'];

function requireColumns(schema: DatabaseSchema, required: Readonly<Record<string, readonly string[]>>): void {
  const missing: string[] = [];
  for (const [table, columns] of Object.entries(required)) {
    const found = schema.tables.get(table);
    if (found === undefined) {
      missing.push(table);
      continue;
    }
    missing.push(...columns.filter((column) => !found.columns.has(column)).map((column) => `${table}.${column}`));
  }
  if (missing.length > 0) {
    throw new OvnSchemaUnsupportedError(
      `${schema.name} schema ${schema.version} lacks ${missing.join(', ')}: OVN sampling needs OVN 24.09 or newer; upgrade OVN or point --nb/--sb at the right database.`,
    );
  }
}

/** The northbound tables, columns and indexes the decoder caches. */
export function northboundSelection(schema: DatabaseSchema): CacheSelection {
  requireColumns(schema, {
    ACL: ACL_COLUMNS,
    Sample: ['metadata'],
    Sampling_App: ['type', 'id'],
    Logical_Switch: ['name', 'external_ids'],
  });
  const selection: Record<string, { columns: readonly string[]; indexes?: readonly string[] }> = {
    ACL: { columns: ACL_COLUMNS, indexes: ['sample_new', 'sample_est', 'label'] },
    Sample: { columns: ['metadata'], indexes: ['metadata'] },
    Sampling_App: { columns: ['type', 'id'] },
    Logical_Switch: { columns: ['name', 'external_ids'] },
  };
  for (const table of HINT_TABLES) {
    if (selection[table] === undefined && schema.tables.get(table)?.columns.has('name') === true) {
      selection[table] = { columns: ['name'] };
    }
  }
  return selection;
}

/** The southbound tables, columns and indexes the decoder caches. */
export function southboundSelection(schema: DatabaseSchema): CacheSelection {
  requireColumns(schema, { Datapath_Binding: ['tunnel_key', 'external_ids'], Logical_Flow: LOGICAL_FLOW_COLUMNS });
  return {
    Datapath_Binding: { columns: ['tunnel_key', 'external_ids'], indexes: ['tunnel_key'] },
    // A node's flows point at a few datapaths, and most share their {stage-name, source} with many others.
    Logical_Flow: { columns: LOGICAL_FLOW_COLUMNS, shared: ['logical_datapath', 'external_ids'] },
  };
}

/** Fails early, with the missing piece named, when a caller-built cache cannot serve the decoder. */
export function assertSelection(cache: TableCache, selection: CacheSelection): void {
  const monitored = cache.monitoredColumns();
  for (const [table, { columns, indexes = [] }] of Object.entries(selection)) {
    const present = monitored.get(table);
    const missing = columns.filter((column) => present?.includes(column) !== true);
    if (present === undefined || missing.length > 0) {
      const what = present === undefined ? `table ${table}` : `${table} columns ${missing.join(', ')}`;
      throw new OvnSchemaUnsupportedError(
        `The ${cache.schema.name} cache lacks ${what}: build it with ${cache.schema.name === NORTHBOUND_DATABASE ? 'northboundSelection' : 'southboundSelection'}(schema).`,
      );
    }
    for (const column of indexes) {
      cache.table(table).lookup(column, '');
    }
  }
}
