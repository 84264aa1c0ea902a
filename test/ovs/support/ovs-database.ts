import { OvsdbClient } from '../../../src/ovsdb/client';
import { OvsdbServer } from '../../support/ovsdb-server';
import { vswitchSchemaPath } from './vswitch-schema';

export interface NodeOvsShape {
  /** Datapath.capabilities:psample as ovs-vswitchd writes it; undefined: the key is absent. */
  readonly psample?: 'true' | 'false';
  /** false: no Datapath row (ovn-controller has not created it). Default true. */
  readonly datapathRow?: boolean;
  readonly datapathType?: string;
  readonly ovsVersion?: string;
  /** Default ['br-int']. */
  readonly bridges?: readonly string[];
}

/** A real ovsdb-server on OVS 3.5's Open_vSwitch schema, shaped like an OVN node's database. */
export interface NodeOvs {
  readonly server: OvsdbServer;
  readonly writer: OvsdbClient;
  readonly remote: string;
  bridgeUuid(name?: string): Promise<string>;
  /** Inserts a Flow_Sample_Collector_Set as another tool would (ovnkube-observ, netobserv). */
  insertCollectorSet(row: { id: number; bridge?: string; localGroupId?: number; externalIds?: Record<string, string> }): Promise<string>;
  /** The Flow_Sample_Collector_Set rows as the server holds them. */
  collectorSetRows(): Promise<{ _uuid: string; id: number; local_group_id: number | undefined; external_ids: Record<string, string> }[]>;
  deleteCollectorSet(uuid: string): Promise<void>;
  stop(): Promise<void>;
}

const map = (record: Readonly<Record<string, string>>): unknown => ['map', Object.entries(record)];

export async function startNodeOvs(shape: NodeOvsShape = {}): Promise<NodeOvs> {
  const server = await OvsdbServer.start({ schema: await vswitchSchemaPath() });
  const writer = await OvsdbClient.connect(server.unixRemote);
  const bridges = shape.bridges ?? ['br-int'];
  const operations: unknown[] = bridges.map((name, i) => ({
    op: 'insert',
    table: 'Bridge',
    'uuid-name': `br${i}`,
    row: { name, datapath_type: shape.datapathType ?? 'system' },
  }));
  const datapaths: [string, unknown][] = [];
  if (shape.datapathRow !== false) {
    operations.push({
      op: 'insert',
      table: 'Datapath',
      'uuid-name': 'dp',
      row: { capabilities: map(shape.psample === undefined ? { ufid: 'true' } : { psample: shape.psample, ufid: 'true' }) },
    });
    datapaths.push([shape.datapathType ?? 'system', ['named-uuid', 'dp']]);
  }
  operations.push({
    op: 'insert',
    table: 'Open_vSwitch',
    row: {
      bridges: ['set', bridges.map((_, i) => ['named-uuid', `br${i}`])],
      datapaths: ['map', datapaths],
      ovs_version: shape.ovsVersion ?? '3.5.0',
    },
  });
  await writer.transact('Open_vSwitch', operations);

  const bridgeUuid = async (name = 'br-int'): Promise<string> => {
    const [result] = (await writer.transact('Open_vSwitch', [
      { op: 'select', table: 'Bridge', where: [['name', '==', name]], columns: ['_uuid'] },
    ])) as [{ rows: { _uuid: [string, string] }[] }];
    return result.rows[0]!._uuid[1];
  };
  return {
    server,
    writer,
    remote: server.unixRemote,
    bridgeUuid,
    async insertCollectorSet(row) {
      const [result] = (await writer.transact('Open_vSwitch', [
        {
          op: 'insert',
          table: 'Flow_Sample_Collector_Set',
          row: {
            id: row.id,
            bridge: ['uuid', await bridgeUuid(row.bridge)],
            ...(row.localGroupId === undefined ? {} : { local_group_id: row.localGroupId }),
            external_ids: map(row.externalIds ?? {}),
          },
        },
      ])) as [{ uuid: [string, string] }];
      return result.uuid[1];
    },
    async collectorSetRows() {
      const [result] = (await writer.transact('Open_vSwitch', [{ op: 'select', table: 'Flow_Sample_Collector_Set', where: [] }])) as [
        {
          rows: {
            _uuid: [string, string];
            id: number;
            local_group_id: number | ['set', number[]];
            external_ids: ['map', [string, string][]];
          }[];
        },
      ];
      return result.rows.map((row) => ({
        _uuid: row._uuid[1],
        id: row.id,
        local_group_id: typeof row.local_group_id === 'number' ? row.local_group_id : row.local_group_id[1][0],
        external_ids: Object.fromEntries(row.external_ids[1]),
      }));
    },
    async deleteCollectorSet(uuid) {
      await writer.transact('Open_vSwitch', [
        { op: 'delete', table: 'Flow_Sample_Collector_Set', where: [['_uuid', '==', ['uuid', uuid]]] },
      ]);
    },
    async stop() {
      await writer.close();
      await server.stop();
    },
  };
}
