import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OvnSchemaUnsupportedError } from '../../src/errors';
import { OvsdbClient } from '../../src/ovsdb/client';
import { unionSelection, type DatabaseModel } from '../../src/ovsdb/model';
import type { Value } from '../../src/ovsdb/row';
import { parseSchema } from '../../src/ovsdb/schema';
import { SharedMirror } from '../../src/ovsdb/shared-mirror';
import { NORTHBOUND_MODEL } from '../../src/ovn/northbound.generated';
import { podSelection, POD_DIRECTORY_READS } from '../../src/ovn/pod-directory';
import { DECODER_NORTHBOUND_READS, DECODER_SOUTHBOUND_READS, northboundSelection, southboundSelection } from '../../src/ovn/selection';
import { SOUTHBOUND_MODEL } from '../../src/ovn/southbound.generated';
import { startOvnkNodeDatabases, type OvnkNodeDatabases } from '../cli/support/ovnk-node';
import { ovnSchemaPaths } from '../support/ovn-schemas';
import { logicalFlowOp } from './support/ovnk-fixtures';

const root = path.join(__dirname, '..', '..');

/** Whether a cached value has the shape the model's column type gives it (and the generated interfaces type it as). */
function hasModelShape(value: Value, type: string): boolean {
  const atom = (candidate: unknown, atomType: string): boolean =>
    atomType === 'integer' || atomType === 'real'
      ? typeof candidate === 'number'
      : typeof candidate === (atomType === 'boolean' ? 'boolean' : 'string');
  const [, kind, key, mapValue] = /^(?:(optional|set of|map of) )?(\w+)(?: to (\w+))?$/.exec(type)!;
  switch (kind) {
    case 'optional':
      return value === undefined || atom(value, key!);
    case 'set of':
      return Array.isArray(value) && Object.isFrozen(value) && value.every((element) => atom(element, key!));
    case 'map of':
      return value instanceof Map && [...value].every(([k, v]) => atom(k, key!) && atom(v, mapValue!));
    default:
      return atom(value, key!);
  }
}

describe('typed rows generated from the OVN 25.03 schemas', () => {
  it('the checked-in models are what scripts/generate-ovn-models.mjs writes from the real schemas', () => {
    const check = spawnSync(process.execPath, [path.join(root, 'scripts', 'generate-ovn-models.mjs'), '--check'], { encoding: 'utf8' });
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });

  it('a server typing a column the decoder reads otherwise than the model is refused, the column named', async () => {
    const schema = JSON.parse(await readFile((await ovnSchemaPaths()).nb, 'utf8')) as {
      tables: Record<string, { columns: Record<string, unknown> }>;
    };
    schema.tables.ACL!.columns.label = { type: { key: 'integer', min: 0, max: 'unlimited' } };
    schema.tables.Logical_Switch_Port!.columns.addresses = { type: 'string' };
    const retyped = parseSchema(schema);
    expect(() => northboundSelection(retyped)).toThrow(OvnSchemaUnsupportedError);
    expect(() => northboundSelection(retyped)).toThrow(/ACL\.label is set of integer, not integer: OVN sampling needs OVN 24\.09 or newer/);
    expect(() => podSelection(retyped)).toThrow(
      /Logical_Switch_Port\.addresses is string, not set of string: point --nb at an OVN northbound database/,
    );
  });

  describe('rows read from a node as ovn-kubernetes writes it', () => {
    let dbs: OvnkNodeDatabases;
    const clients: OvsdbClient[] = [];

    beforeAll(async () => {
      dbs = await startOvnkNodeDatabases();
      const [bindings] = (await dbs.sbWriter.transact('OVN_Southbound', [
        { op: 'select', table: 'Datapath_Binding', where: [], columns: ['_uuid'] },
      ])) as [{ rows: { _uuid: [string, string] }[] }];
      const flow = logicalFlowOp({
        datapath: bindings.rows[0]!._uuid,
        pipeline: 'ingress',
        tableId: 29,
        priority: 50,
        match: 'outport == "none"',
        actions: 'drop;',
        stageName: 'ls_in_l2_unknown',
        source: 'northd.c:9308',
      });
      await dbs.sbWriter.transact('OVN_Southbound', [
        { op: 'insert', table: 'SB_Global', row: { options: ['map', [['northd_internal_version', '25.03.0-20.41.0-78.0']]] } },
        { ...flow, row: { ...(flow.row as object), flow_desc: 'No L2 destination' } },
      ]);
    });

    afterAll(async () => {
      await Promise.all(clients.map((client) => client.close()));
      await dbs?.stop();
    });

    it.each([
      [
        'OVN_Northbound',
        () => dbs.nb.unixRemote,
        unionSelection(DECODER_NORTHBOUND_READS, POD_DIRECTORY_READS),
        NORTHBOUND_MODEL,
        northboundSelection,
      ],
      ['OVN_Southbound', () => dbs.sb.unixRemote, DECODER_SOUTHBOUND_READS, SOUTHBOUND_MODEL, southboundSelection],
    ] as const)(
      'hold every %s column read in the shape its generated type says',
      async (database, remote, reads, model: DatabaseModel, check) => {
        const client = await OvsdbClient.connect(remote());
        clients.push(client);
        const mirror = SharedMirror.join(client, database, reads, check);
        const cache = await mirror.cache;
        await mirror.synced;
        let values = 0;
        for (const [table, columns] of cache.monitoredColumns()) {
          for (const row of cache.table(table).values()) {
            for (const column of columns) {
              const type = model.columns[table]![column]!;
              expect(hasModelShape(row[column], type), `${table}.${column} (${type}) of ${row._uuid}`).toBe(true);
              values++;
            }
          }
        }
        expect(values).toBeGreaterThan(10);
        await mirror.leave();
      },
    );
  });
});
