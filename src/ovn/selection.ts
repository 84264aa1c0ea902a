import { OvnSchemaUnsupportedError } from '../errors';
import type { CacheSelection, TableCache } from '../ovsdb/cache';
import { modelMismatches, unionSelection } from '../ovsdb/model';
import type { DatabaseSchema } from '../ovsdb/schema';
import { ACL_CATALOG_READS } from './acl-catalog';
import { DATAPATH_NB_READS, DATAPATH_SB_READS } from './datapath-directory';
import { DROP_SAMPLING_NB_READS, DROP_SAMPLING_SB_READS } from './drop-sampling';
import { LOGICAL_FLOW_READS } from './flow-directory';
import { NORTHBOUND_MODEL } from './northbound.generated';
import { SAMPLING_APPS_READS } from './sampling-apps';
import { SOUTHBOUND_MODEL } from './southbound.generated';
import { STAGE_HINT_READS } from './stage-hints';

export const NORTHBOUND_DATABASE = 'OVN_Northbound';
export const SOUTHBOUND_DATABASE = 'OVN_Southbound';

const MODELS = { [NORTHBOUND_DATABASE]: NORTHBOUND_MODEL, [SOUTHBOUND_DATABASE]: SOUTHBOUND_MODEL } as const;

/** What the decoder's indexes read of the northbound database, each as it declares it. */
export const DECODER_NORTHBOUND_READS = unionSelection(
  ACL_CATALOG_READS,
  SAMPLING_APPS_READS,
  DROP_SAMPLING_NB_READS,
  DATAPATH_NB_READS,
  STAGE_HINT_READS,
);

/** What the decoder's indexes read of the southbound database. */
export const DECODER_SOUTHBOUND_READS = unionSelection(DATAPATH_SB_READS, LOGICAL_FLOW_READS, DROP_SAMPLING_SB_READS);

/**
 * `reads`, once `schema` is known to serve it as the generated model types it (the rows are read
 * through the model's interfaces); otherwise OvnSchemaUnsupportedError naming what differs.
 */
export function checkedSelection(schema: DatabaseSchema, reads: CacheSelection, advice: string): CacheSelection {
  const model = MODELS[schema.name as keyof typeof MODELS];
  const mismatches =
    model === undefined ? [`the tables of ${NORTHBOUND_DATABASE} or ${SOUTHBOUND_DATABASE}`] : modelMismatches(schema, model, reads);
  if (mismatches.length > 0) {
    throw new OvnSchemaUnsupportedError(`${schema.name} schema ${schema.version} lacks ${mismatches.join(', ')}: ${advice}.`);
  }
  return reads;
}

const DECODER_ADVICE = 'OVN sampling needs OVN 24.09 or newer; upgrade OVN or point --nb/--sb at the right database';

/** The northbound tables, columns and indexes the decoder's indexes read: the selection of its northbound mirror. */
export function northboundSelection(schema: DatabaseSchema): CacheSelection {
  return checkedSelection(schema, DECODER_NORTHBOUND_READS, DECODER_ADVICE);
}

/** The southbound tables, columns and indexes the decoder's indexes read. */
export function southboundSelection(schema: DatabaseSchema): CacheSelection {
  return checkedSelection(schema, DECODER_SOUTHBOUND_READS, DECODER_ADVICE);
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
      // Throws OvsdbSchemaError, naming the index to add, when the cache lacks it.
      cache.table(table).lookup(column, '');
    }
  }
}
