import { beforeAll, describe, expect, it } from 'vitest';
import { OvsdbListenerError, OvsdbSchemaError } from '../../src/errors';
import { TableCache, type CacheSelection } from '../../src/ovsdb/cache';
import { parseLargeJson } from '../../src/ovsdb/lazy-json';
import type { Row } from '../../src/ovsdb/row';
import { loadSchemaFile, type DatabaseSchema } from '../../src/ovsdb/schema';
import { ovnSchemaPaths } from '../support/ovn-schemas';

const ACL_1 = '11111111-1111-1111-1111-111111111111';
const ACL_2 = '22222222-2222-2222-2222-222222222222';
const SAMPLE_1 = 'aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa';
const SAMPLE_2 = 'bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb';
const PG = 'cccccccc-cccc-cccc-cccc-cccccccccccc';

const selection: CacheSelection = {
  ACL: {
    columns: ['action', 'priority', 'direction', 'name', 'sample_new', 'sample_est', 'external_ids', 'label'],
    indexes: ['sample_new', 'action'],
  },
  Sample: { columns: ['metadata', 'collectors'], indexes: ['metadata'] },
  Port_Group: { columns: ['name', 'acls'], indexes: ['acls'] },
};

interface Change {
  table: string;
  uuid: string;
  oldRow: Row | undefined;
  newRow: Row | undefined;
}

function record(cache: TableCache): { changes: Change[]; batches: number } {
  const log = { changes: [] as Change[], batches: 0 };
  cache.on('change', (table, uuid, oldRow, newRow) => log.changes.push({ table, uuid, oldRow, newRow }));
  cache.on('batch', () => log.batches++);
  return log;
}

function initial(): Record<string, unknown> {
  return {
    ACL: {
      [ACL_1]: {
        initial: {
          action: 'allow-related',
          priority: 1001,
          direction: 'to-lport',
          name: 'np-allow',
          sample_new: ['uuid', SAMPLE_1],
          external_ids: [
            'map',
            [
              ['k8s.ovn.org/name', 'ns:allow-web'],
              ['k8s.ovn.org/owner-type', 'NetworkPolicy'],
            ],
          ],
        },
      },
      [ACL_2]: { initial: { action: 'drop', priority: 1000, direction: 'from-lport', sample_est: ['uuid', SAMPLE_2] } },
    },
    Sample: {
      [SAMPLE_1]: { initial: { metadata: 7 } },
      [SAMPLE_2]: { initial: { metadata: 8 } },
    },
    Port_Group: {
      [PG]: {
        initial: {
          name: 'pg_ns',
          acls: [
            'set',
            [
              ['uuid', ACL_1],
              ['uuid', ACL_2],
            ],
          ],
        },
      },
    },
  };
}

describe('TableCache fed with update2 messages for the real OVN NB schema', () => {
  let nb: DatabaseSchema;
  beforeAll(async () => {
    nb = await loadSchemaFile((await ovnSchemaPaths()).nb);
  });

  it('decodes initial rows, filling the columns ovsdb-server omits as defaults', () => {
    const cache = new TableCache(nb, selection);
    const log = record(cache);
    cache.applyUpdate2(initial());
    expect(log.batches).toBe(1);
    expect(log.changes).toHaveLength(5);
    const acl = cache.table('ACL').get(ACL_1)!;
    expect(acl).toEqual({
      _uuid: ACL_1,
      action: 'allow-related',
      priority: 1001,
      direction: 'to-lport',
      name: 'np-allow',
      sample_new: SAMPLE_1,
      sample_est: undefined,
      external_ids: new Map([
        ['k8s.ovn.org/name', 'ns:allow-web'],
        ['k8s.ovn.org/owner-type', 'NetworkPolicy'],
      ]),
      label: 0,
    });
    expect(Object.isFrozen(acl)).toBe(true);
    expect(cache.table('ACL').get(ACL_2)!.name).toBeUndefined();
    expect(cache.table('ACL').get(ACL_2)!.external_ids).toEqual(new Map());
    expect(cache.table('Sample').get(SAMPLE_1)!.collectors).toEqual([]);
    expect(cache.table('Port_Group').get(PG)!.acls).toEqual([ACL_1, ACL_2]);
    expect(cache.table('ACL').size).toBe(2);
    expect([...cache.table('ACL').values()].map((row) => row._uuid).sort()).toEqual([ACL_1, ACL_2]);
  });

  it('applies modify diffs: atoms replace, set elements toggle, map keys add/replace/remove', () => {
    const cache = new TableCache(nb, selection);
    cache.applyUpdate2(initial());
    const before = cache.table('ACL').get(ACL_1)!;
    const log = record(cache);
    cache.applyUpdate2({
      ACL: {
        [ACL_1]: {
          modify: {
            priority: 900,
            // columns of at most one element carry the new value, as ovsdb-server sends them
            sample_new: ['uuid', SAMPLE_2],
            name: ['set', []],
            external_ids: [
              'map',
              [
                ['k8s.ovn.org/name', 'ns:allow-db'],
                ['k8s.ovn.org/owner-type', 'NetworkPolicy'],
                ['new', 'v'],
              ],
            ],
          },
        },
      },
      Port_Group: { [PG]: { modify: { acls: ['set', [['uuid', ACL_2]]] } } },
    });
    const after = cache.table('ACL').get(ACL_1)!;
    expect(after).not.toBe(before);
    expect(before.priority).toBe(1001);
    expect(after.priority).toBe(900);
    expect(after.sample_new).toBe(SAMPLE_2);
    expect(after.name).toBeUndefined();
    expect(after.external_ids).toEqual(
      new Map([
        ['k8s.ovn.org/name', 'ns:allow-db'],
        ['new', 'v'],
      ]),
    );
    expect(cache.table('Port_Group').get(PG)!.acls).toEqual([ACL_1]);
    expect(log.changes.map((change) => [change.table, change.uuid, change.oldRow === before || change.table !== 'ACL'])).toEqual([
      ['ACL', ACL_1, true],
      ['Port_Group', PG, true],
    ]);
    cache.applyUpdate2({ ACL: { [ACL_1]: { modify: { sample_new: ['set', []] } } } });
    expect(cache.table('ACL').get(ACL_1)!.sample_new).toBeUndefined();
  });

  it('keeps secondary indexes in step: uuid, set (per element) and integer columns', () => {
    const cache = new TableCache(nb, selection);
    cache.applyUpdate2(initial());
    const acls = cache.table('ACL');
    expect(acls.lookup('sample_new', SAMPLE_1).map((row) => row._uuid)).toEqual([ACL_1]);
    expect(acls.lookup('action', 'drop').map((row) => row._uuid)).toEqual([ACL_2]);
    expect(
      cache
        .table('Sample')
        .lookup('metadata', 8)
        .map((row) => row._uuid),
    ).toEqual([SAMPLE_2]);
    expect(
      cache
        .table('Port_Group')
        .lookup('acls', ACL_2)
        .map((row) => row._uuid),
    ).toEqual([PG]);

    cache.applyUpdate2({
      ACL: { [ACL_1]: { modify: { sample_new: ['set', []], action: 'drop' } }, [ACL_2]: { delete: null } },
      Port_Group: { [PG]: { modify: { acls: ['uuid', ACL_2] } } },
    });
    expect(acls.lookup('sample_new', SAMPLE_1)).toEqual([]);
    expect(acls.lookup('action', 'drop')).toEqual([acls.get(ACL_1)]);
    expect(acls.lookup('action', 'allow-related')).toEqual([]);
    expect(cache.table('Port_Group').lookup('acls', ACL_2)).toEqual([]);
    expect(cache.table('Port_Group').lookup('acls', ACL_1)).toEqual([cache.table('Port_Group').get(PG)]);
    expect(() => acls.lookup('priority', 1)).toThrow(OvsdbSchemaError);
  });

  it('indexes many rows under one key and hands out the current row objects', () => {
    const cache = new TableCache(nb, selection);
    const uuid = (i: number) => `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`;
    const rows: Record<string, unknown> = {};
    for (let i = 0; i < 20; i++) {
      rows[uuid(i)] = { initial: { action: 'drop', priority: i, direction: 'to-lport' } };
    }
    cache.applyUpdate2({ ACL: rows });
    const acls = cache.table('ACL');
    expect(acls.lookup('action', 'drop').map((row) => row.priority)).toEqual([...Array(20).keys()]);
    const removals: Record<string, unknown> = {};
    for (let i = 0; i < 20; i += 2) {
      removals[uuid(i)] = { delete: null };
    }
    removals[uuid(1)] = { modify: { priority: 100 } };
    removals[uuid(3)] = { modify: { action: 'allow' } };
    cache.applyUpdate2({ ACL: removals });
    expect(
      acls
        .lookup('action', 'drop')
        .map((row) => row.priority)
        .sort((a, b) => Number(a) - Number(b)),
    ).toEqual([5, 7, 9, 11, 13, 15, 17, 19, 100]);
    expect(acls.lookup('action', 'drop')).toContain(acls.get(uuid(1)));
    expect(acls.lookup('action', 'allow')).toEqual([acls.get(uuid(3))]);
    expect(Object.isFrozen(acls.lookup('action', 'drop'))).toBe(true);
  });

  it('applies RFC 7047 update messages (old/new) from the plain monitor method', () => {
    const cache = new TableCache(nb, selection);
    const log = record(cache);
    cache.applyUpdate({ Sample: { [SAMPLE_1]: { new: { metadata: 7, collectors: ['set', []] } } } });
    cache.applyUpdate({ Sample: { [SAMPLE_1]: { old: { metadata: 7 }, new: { metadata: 9, collectors: ['set', []] } } } });
    expect(cache.table('Sample').get(SAMPLE_1)!.metadata).toBe(9);
    expect(cache.table('Sample').lookup('metadata', 9)).toHaveLength(1);
    cache.applyUpdate({ Sample: { [SAMPLE_1]: { old: { metadata: 9, collectors: ['set', []] } } } });
    expect(cache.table('Sample').size).toBe(0);
    expect(log.batches).toBe(3);
    expect(log.changes.map((change) => [change.oldRow?.metadata, change.newRow?.metadata])).toEqual([
      [undefined, 7],
      [7, 9],
      [9, undefined],
    ]);
  });

  it('converges from a resync snapshot with events only for rows that differ', () => {
    const cache = new TableCache(nb, selection);
    cache.applyUpdate2(initial());
    const unchanged = cache.table('Sample').get(SAMPLE_1);
    const snapshot = initial() as { ACL: Record<string, unknown>; Sample: Record<string, unknown> };
    delete snapshot.ACL[ACL_2];
    snapshot.Sample[SAMPLE_2] = { initial: { metadata: 80 } };
    const log = record(cache);
    cache.applyUpdate2(snapshot, { snapshot: true });
    expect(log.changes.map((change) => [change.table, change.uuid, change.newRow === undefined])).toEqual([
      ['Sample', SAMPLE_2, false],
      ['ACL', ACL_2, true],
    ]);
    expect(cache.table('Sample').get(SAMPLE_1)).toBe(unchanged);
    expect(cache.table('Sample').lookup('metadata', 8)).toEqual([]);
    expect(cache.stats).toEqual({ malformedRows: 0, inconsistentRows: 0, unselectedTableRows: 0, failedListenerCalls: 0 });
  });

  it('counts and reports bad row updates without dropping the rest of the message', () => {
    const cache = new TableCache(nb, selection);
    const reported: string[] = [];
    cache.on('malformed', (table, uuid, error) => reported.push(`${table} ${uuid} ${(error as { code?: string }).code}`));
    cache.applyUpdate2({
      ACL: {
        [ACL_1]: { initial: { action: 7, priority: 1 } },
        [ACL_2]: { initial: { action: 'drop', priority: 1, direction: 'to-lport' } },
      },
      Sample: { [SAMPLE_1]: { modify: { metadata: 3 } }, [SAMPLE_2]: 'garbage' },
      Logical_Switch: { [PG]: { initial: { name: 'ls' } } },
    });
    cache.applyUpdate2([1, 2]);
    expect(cache.table('ACL').get(ACL_2)!.action).toBe('drop');
    expect(cache.table('ACL').get(ACL_1)).toBeUndefined();
    expect(cache.stats).toEqual({ malformedRows: 3, inconsistentRows: 1, unselectedTableRows: 1, failedListenerCalls: 0 });
    expect(reported).toEqual([
      `ACL ${ACL_1} OVSDB_PROTOCOL`,
      `Sample ${SAMPLE_1} OVSDB_PROTOCOL`,
      `Sample ${SAMPLE_2} OVSDB_PROTOCOL`,
      '  OVSDB_PROTOCOL',
    ]);
  });

  it('applies the whole snapshot and emits batch even when a change listener throws, then throws a typed error', () => {
    const cache = new TableCache(nb, selection);
    cache.applyUpdate2(initial());
    const log = record(cache);
    let calls = 0;
    cache.on('change', () => {
      calls++;
      throw new Error('listener bug');
    });
    const snapshot = initial() as { ACL: Record<string, unknown>; Sample: Record<string, unknown> };
    delete snapshot.ACL[ACL_2];
    snapshot.Sample[SAMPLE_2] = { initial: { metadata: 80 } };
    let thrown: unknown;
    try {
      cache.applyUpdate2(snapshot, { snapshot: true });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(OvsdbListenerError);
    expect(thrown).toMatchObject({ code: 'OVSDB_LISTENER', errors: [expect.any(Error), expect.any(Error)] });
    // The other listener saw every change, the deletion pass ran and batch still came.
    expect(log.changes.map((change) => [change.table, change.uuid, change.newRow === undefined])).toEqual([
      ['Sample', SAMPLE_2, false],
      ['ACL', ACL_2, true],
    ]);
    expect(log.batches).toBe(1);
    expect(calls).toBe(2);
    expect(cache.table('ACL').get(ACL_2)).toBeUndefined();
    expect(cache.stats.failedListenerCalls).toBe(2);
    // The next message starts clean.
    cache.removeAllListeners('change');
    expect(() => cache.applyUpdate2({ Sample: { [SAMPLE_2]: { modify: { metadata: 81 } } } })).not.toThrow();
  });

  it('counts a row whose value is not valid JSON inside a large lazily parsed message, and applies the others', () => {
    const rows: string[] = [];
    // Over 64 KiB and 256 rows, so the rows stay lazy until the cache reads them.
    for (let i = 0; i < 1500; i++) {
      const uuid = `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
      rows.push(`"${uuid}":${i === 150 ? '{"initial":{"metadata":1x}}' : `{"initial":{"metadata":${i + 1}}}`}`);
    }
    const message = parseLargeJson(Buffer.from(`{"Sample":{${rows.join(',')}}}`));
    const cache = new TableCache(nb, selection);
    const reported: string[] = [];
    cache.on('malformed', (table, uuid) => reported.push(`${table} ${uuid}`));
    cache.applyUpdate2(message);
    expect(cache.table('Sample').size).toBe(1499);
    expect(cache.stats.malformedRows).toBe(1);
    expect(reported).toEqual([`Sample 00000000-0000-4000-8000-${(150).toString(16).padStart(12, '0')}`]);
  });

  it('keeps equal values of shared columns once, and still applies diffs to them', () => {
    const cache = new TableCache(nb, {
      ACL: { columns: ['priority', 'sample_new', 'external_ids'], shared: ['sample_new', 'external_ids'] },
      Sample: { columns: ['metadata'] },
    });
    const ids = (hint?: string) => [
      'map',
      [['stage-name', 'ls_in_acl_eval'], ['source', 'northd.c:7010'], ...(hint === undefined ? [] : [['stage-hint', hint]])],
    ];
    // Each message carries its own copies, as JSON.parse makes them.
    const acl = (hint?: string) =>
      JSON.parse(JSON.stringify({ initial: { priority: 1, sample_new: ['uuid', SAMPLE_1], external_ids: ids(hint) } })) as unknown;
    cache.applyUpdate2({ ACL: { [ACL_1]: acl() } });
    cache.applyUpdate2({ ACL: { [ACL_2]: acl(), [PG]: acl('1a2b3c4d') } });
    const [first, second, hinted] = [ACL_1, ACL_2, PG].map((uuid) => cache.table('ACL').get(uuid)!);
    expect(second!.external_ids).toBe(first!.external_ids);
    expect(second!.sample_new).toBe(first!.sample_new);
    expect(hinted!.external_ids).not.toBe(first!.external_ids);
    expect(hinted!.external_ids).toEqual(
      new Map([
        ['stage-name', 'ls_in_acl_eval'],
        ['source', 'northd.c:7010'],
        ['stage-hint', '1a2b3c4d'],
      ]),
    );
    // A diff builds a new map (the shared one is left alone), itself shared when equal to a known one.
    cache.applyUpdate2({ ACL: { [PG]: { modify: { external_ids: ['map', [['stage-hint', '1a2b3c4d']]] } } } });
    expect(cache.table('ACL').get(PG)!.external_ids).toBe(first!.external_ids);
    expect((hinted!.external_ids as ReadonlyMap<string, string>).size).toBe(3);
    expect(first!.external_ids).toEqual(
      new Map([
        ['stage-name', 'ls_in_acl_eval'],
        ['source', 'northd.c:7010'],
      ]),
    );
  });

  it('rejects selections the schema cannot satisfy', () => {
    expect(() => new TableCache(nb, { Nope: { columns: [] } })).toThrow(/no table "Nope"/);
    expect(() => new TableCache(nb, { ACL: { columns: ['nope'] } })).toThrow(/no column "nope"/);
    expect(() => new TableCache(nb, { ACL: { columns: ['action'], indexes: ['priority'] } })).toThrow(/not among the selected columns/);
    expect(() => new TableCache(nb, { ACL: { columns: ['action'], shared: ['external_ids'] } })).toThrow(
      /Cannot share ACL.external_ids: it is not among/,
    );
    expect(() => new TableCache(nb, {})).toThrow(OvsdbSchemaError);
    expect(() => new TableCache(nb, selection).table('Meter')).toThrow(/not in this cache's selection/);
    expect([...new TableCache(nb, selection).monitoredColumns().get('Sample')!]).toEqual(['metadata', 'collectors']);
  });
});
