import { afterAll, afterEach, beforeAll } from 'vitest';
import { OvsdbConnectionError, OvsdbDisconnectedError } from '../../src/errors';
import { TableCache, type CacheSelection } from '../../src/ovsdb/cache';
import { OvsdbClient } from '../../src/ovsdb/client';
import { loadSchemaFile, type DatabaseSchema } from '../../src/ovsdb/schema';
import { ovnSchemaPaths } from '../support/ovn-schemas';
import { OvsdbCluster, OvsdbServer } from '../support/ovsdb-server';

/** The NB columns ovn-psample's decoder reads, with the indexes it looks rows up by. */
export const NB_SELECTION: CacheSelection = {
  ACL: {
    columns: ['action', 'direction', 'priority', 'match', 'name', 'label', 'sample_new', 'sample_est', 'external_ids'],
    indexes: ['sample_new', 'sample_est'],
  },
  Sample: { columns: ['metadata', 'collectors'], indexes: ['metadata'] },
  Port_Group: { columns: ['name', 'acls'], indexes: ['acls'] },
};

/**
 * Operations creating a Port_Group holding `count` ACLs, each with its own Sample (metadata =
 * firstMetadata + i). Samples and ACLs are not root rows: they must be created in the same
 * transaction as the Port_Group that references them, or ovsdb-server collects them.
 */
export function portGroupWithAclsOps(name: string, count: number, firstMetadata: number): unknown[] {
  const ops: unknown[] = [];
  const acls: unknown[] = [];
  for (let i = 0; i < count; i++) {
    ops.push({ op: 'insert', table: 'Sample', row: { metadata: firstMetadata + i }, 'uuid-name': `s${i}` });
    ops.push({
      op: 'insert',
      table: 'ACL',
      row: {
        action: i % 2 === 0 ? 'allow-related' : 'drop',
        direction: 'to-lport',
        priority: 1000 + (i % 100),
        match: `outport == @${name} && ip4.src == 10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
        sample_new: ['named-uuid', `s${i}`],
        external_ids: [
          'map',
          [
            ['k8s.ovn.org/name', `ns${i % 50}:policy${i}`],
            ['k8s.ovn.org/owner-type', 'NetworkPolicy'],
          ],
        ],
      },
      'uuid-name': `a${i}`,
    });
    acls.push(['named-uuid', `a${i}`]);
  }
  ops.push({ op: 'insert', table: 'Port_Group', row: { name, acls: ['set', acls] } });
  return ops;
}

/** Resolves once `predicate` holds for the cache, checking after every applied update. */
export function cacheReaches(cache: TableCache, predicate: () => boolean): Promise<void> {
  if (predicate()) {
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const check = () => {
      if (predicate()) {
        cache.off('batch', check);
        resolve();
      }
    };
    cache.on('batch', check);
  });
}

/** Rows of every table as plain sorted data, to compare two caches. */
export function cacheContent(cache: TableCache): Record<string, unknown[]> {
  const content: Record<string, unknown[]> = {};
  for (const table of cache.monitoredColumns().keys()) {
    content[table] = [...cache.table(table).values()]
      .map((row) =>
        Object.fromEntries(
          Object.entries(row).map(([column, value]) => [
            column,
            value instanceof Map ? [...value].sort() : Array.isArray(value) ? [...value].sort() : value,
          ]),
        ),
      )
      .sort((a, b) => (a._uuid as string).localeCompare(b._uuid as string));
  }
  return content;
}

export interface NbServerFixture {
  server: OvsdbServer;
  schema: DatabaseSchema;
  /** Connected over unix before the tests, after `seed` ran with it. */
  writer: OvsdbClient;
  /** Clients a test opens; closed after the file's tests (the writer is among them). */
  clients: OvsdbClient[];
}

export interface NbServerOptions {
  /** Also listen on ::1 (`server.ipv6Remote`). */
  readonly ipv6?: boolean;
  /**
   * For files whose tests kill, stop or restart the server: after each test its clients (the
   * writer among them, after the first) are closed and a server left down is started again, so
   * every test meets the seeded server and no client of an earlier one.
   */
  readonly restoreAfterEach?: boolean;
}

/** A standalone NB ovsdb-server with the real OVN schema for one test file, seeded by `seed`, stopped after it. */
export function useNbServer(
  seed: (writer: OvsdbClient) => Promise<unknown> = () => Promise.resolve(),
  options: NbServerOptions = {},
): NbServerFixture {
  const fixture = { clients: [] as OvsdbClient[] } as NbServerFixture;
  beforeAll(async () => {
    const { nb } = await ovnSchemaPaths();
    fixture.schema = await loadSchemaFile(nb);
    fixture.server = await OvsdbServer.start({ schema: nb, ipv6: options.ipv6 });
    fixture.writer = await OvsdbClient.connect(fixture.server.unixRemote);
    fixture.clients.push(fixture.writer);
    await seed(fixture.writer);
  });
  if (options.restoreAfterEach === true) {
    afterEach(async () => {
      await Promise.all(fixture.clients.splice(0).map((client) => client.close()));
      if (!fixture.server.running) await fixture.server.start();
    });
  }
  afterAll(async () => {
    await Promise.all(fixture.clients.map((client) => client.close()));
    await fixture.server?.stop();
  });
  return fixture;
}

export interface NbClusterFixture {
  cluster: OvsdbCluster;
  schema: DatabaseSchema;
  /** Clients a test opens; closed after the file's tests. */
  clients: OvsdbClient[];
}

/** A 3-member NB cluster with the real OVN schema for one test file, stopped after it. */
export function useNbCluster(): NbClusterFixture {
  const fixture = { clients: [] as OvsdbClient[] } as NbClusterFixture;
  beforeAll(async () => {
    const { nb } = await ovnSchemaPaths();
    fixture.schema = await loadSchemaFile(nb);
    fixture.cluster = await OvsdbCluster.start({ schema: nb });
  });
  afterAll(async () => {
    await Promise.all(fixture.clients.map((client) => client.close()));
    await fixture.cluster?.stop();
  });
  return fixture;
}

/** Every column of `tables` in `schema`: a mirror of whole rows, to compare with the server's own. */
export function wholeRowSelection(schema: DatabaseSchema, tables: readonly string[]): CacheSelection {
  return Object.fromEntries(tables.map((table) => [table, { columns: [...schema.tables.get(table)!.columns.keys()] }]));
}

/**
 * What the server holds now for the cache's tables and columns, read with one select transaction
 * (one consistent snapshot), in the form of cacheContent().
 */
export async function serverContent(client: OvsdbClient, cache: TableCache): Promise<Record<string, unknown[]>> {
  const tables = [...cache.monitoredColumns()];
  const results = (await client.transact(
    cache.schema.name,
    tables.map(([table, columns]) => ({ op: 'select', table, where: [], columns: ['_uuid', ...columns] })),
  )) as { rows: Record<string, unknown>[] }[];
  const dump = new TableCache(cache.schema, Object.fromEntries(tables.map(([table, columns]) => [table, { columns }])));
  dump.applyUpdate(
    Object.fromEntries(
      tables.map(([table], index) => [
        table,
        Object.fromEntries(results[index]!.rows.map((row) => [(row._uuid as [string, string])[1], { new: row }])),
      ]),
    ),
  );
  return cacheContent(dump);
}

/**
 * A writer committing back to back, as ovn-kubernetes does while it reconciles policies: port
 * groups of ACLs created, ACLs modified (priority, match, external_ids), groups deleted (their
 * ACLs and Samples collected with them). A transaction lost to a disconnection is not retried
 * (the next step writes something else). pause() and stop() wait for the transaction in flight.
 */
export interface BusyWriter {
  pause(): Promise<void>;
  resume(): void;
  /** Resolves with the number of committed transactions. */
  stop(): Promise<number>;
}

export function startBusyWriter(client: OvsdbClient, name: string, firstMetadata: number): BusyWriter {
  let running = true;
  let paused: Promise<void> | undefined;
  let unpause = (): void => undefined;
  let idle = (): void => undefined;
  let commits = 0;
  const groups: string[] = [];
  const step = async (index: number): Promise<void> => {
    const pg = `${name}_${index}`;
    if (index % 3 === 0 || groups.length < 3) {
      await client.transact('OVN_Northbound', portGroupWithAclsOps(pg, 3, firstMetadata + index * 3));
      groups.push(pg);
    } else if (index % 3 === 1) {
      const target = groups[index % groups.length]!;
      await client.transact('OVN_Northbound', [
        {
          op: 'update',
          table: 'ACL',
          where: [['match', 'includes', `outport == @${target} && ip4.src == 10.0.0.1`]],
          row: { priority: index % 32_000, external_ids: ['map', [['step', String(index)]]] },
        },
      ]);
    } else {
      await client.transact('OVN_Northbound', [{ op: 'delete', table: 'Port_Group', where: [['name', '==', groups.shift()!]] }]);
    }
  };
  const loop: Promise<void> = (async () => {
    for (let index = 0; running; index++) {
      if (paused !== undefined) {
        idle();
        await paused;
        continue;
      }
      try {
        await step(index);
        commits++;
      } catch (error) {
        if (!(error instanceof OvsdbDisconnectedError || error instanceof OvsdbConnectionError) && running) {
          throw error;
        }
      }
    }
    idle();
  })();
  return {
    pause() {
      paused ??= new Promise((resolve) => (unpause = resolve));
      return new Promise((resolve) => (idle = resolve));
    },
    resume() {
      paused = undefined;
      unpause();
    },
    async stop() {
      running = false;
      this.resume();
      await loop;
      return commits;
    },
  };
}
