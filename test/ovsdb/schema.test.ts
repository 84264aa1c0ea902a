import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { OvsdbSchemaError } from '../../src/errors';
import { loadSchemaFile, parseSchema, type DatabaseSchema } from '../../src/ovsdb/schema';
import { ovnSchemaPaths } from '../support/ovn-schemas';

describe('parseSchema with the real OVN 25.03 schemas', () => {
  let nb: DatabaseSchema;
  let sb: DatabaseSchema;
  let nbJson: { version: string; tables: Record<string, unknown> };

  beforeAll(async () => {
    const paths = await ovnSchemaPaths();
    nb = await loadSchemaFile(paths.nb);
    sb = await loadSchemaFile(paths.sb);
    nbJson = JSON.parse(await readFile(paths.nb, 'utf8')) as typeof nbJson;
  });

  it('reads every table of both databases', () => {
    expect(nb.name).toBe('OVN_Northbound');
    expect(sb.name).toBe('OVN_Southbound');
    expect(nb.version).toBe(nbJson.version);
    expect([...nb.tables.keys()].sort()).toEqual(Object.keys(nbJson.tables).sort());
    expect(nb.cksum).toMatch(/^\d+ \d+$/);
  });

  it('classifies columns by how a row holds them', () => {
    const acl = nb.tables.get('ACL')!;
    expect(acl.isRoot).toBe(false);
    expect(acl.columns.get('priority')!.kind).toBe('atom');
    expect(acl.columns.get('priority')!.type.key).toMatchObject({ type: 'integer', minInteger: 0, maxInteger: 32767 });
    expect(acl.columns.get('match')!.type.key.type).toBe('string');
    expect(acl.columns.get('sample_new')!.kind).toBe('optional');
    expect(acl.columns.get('sample_new')!.type.key).toMatchObject({ type: 'uuid', refTable: 'Sample', refType: 'strong' });
    expect(acl.columns.get('action')!.type.key.enum).toEqual(['allow', 'allow-related', 'allow-stateless', 'drop', 'reject', 'pass']);
    expect(acl.columns.get('external_ids')!.kind).toBe('map');
    expect(acl.columns.get('external_ids')!.type.max).toBe('unlimited');
    expect(nb.tables.get('Port_Group')!.columns.get('acls')!.kind).toBe('set');
    expect(nb.tables.get('Port_Group')!.columns.get('ports')!.type.key.refType).toBe('weak');
    expect(nb.tables.get('Sample')!.indexes).toEqual([['metadata']]);
    expect(sb.tables.get('Port_Binding')!.columns.get('tunnel_key')!.kind).toBe('atom');
  });
});

describe('parseSchema rejects what RFC 7047 forbids with a typed error', () => {
  const base = { name: 'db', version: '1.0.0' };
  it.each([
    ['not an object', 42],
    ['no tables', { ...base }],
    ['an unknown atomic type', { ...base, tables: { T: { columns: { c: { type: 'float' } } } } }],
    ['min 2', { ...base, tables: { T: { columns: { c: { type: { key: 'string', min: 2, max: 3 } } } } } }],
    ['max below min', { ...base, tables: { T: { columns: { c: { type: { key: 'string', min: 1, max: 0 } } } } } }],
    ['refTable on a string', { ...base, tables: { T: { columns: { c: { type: { key: { type: 'string', refTable: 'T' } } } } } } }],
    ['a dangling refTable', { ...base, tables: { T: { columns: { c: { type: { key: { type: 'uuid', refTable: 'U' } } } } } } }],
    ['an index on an unknown column', { ...base, tables: { T: { columns: { c: { type: 'string' } }, indexes: [['d']] } } }],
  ])('%s', (_what, json) => {
    expect(() => parseSchema(json)).toThrow(OvsdbSchemaError);
    try {
      parseSchema(json);
    } catch (error) {
      expect((error as OvsdbSchemaError).code).toBe('OVSDB_SCHEMA');
    }
  });

  it.each([
    ['a table', { T: { columns: {} }, 'x-y': { columns: {} } }],
    ['a column', JSON.parse('{"T":{"columns":{"__proto__":{"type":"string"}}}}') as unknown],
    ['a column', { T: { columns: { '1st': { type: 'string' } } } }],
  ])('refuses %s name that is not an RFC 7047 <id> (it would become a property of cached rows)', (_what, tables) => {
    expect(() => parseSchema({ name: 'D', tables })).toThrow(/is not an RFC 7047 <id>/);
  });

  it('reports an unreadable file with the path', async () => {
    await expect(loadSchemaFile('/nonexistent/x.ovsschema')).rejects.toMatchObject({
      code: 'OVSDB_SCHEMA',
      message: expect.stringContaining('/nonexistent/x.ovsschema'),
    });
  });
});
