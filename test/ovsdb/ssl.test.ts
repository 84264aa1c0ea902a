import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OvsdbConnectionError } from '../../src/errors';
import { TableCache } from '../../src/ovsdb/cache';
import { OvsdbClient } from '../../src/ovsdb/client';
import { loadSchemaFile } from '../../src/ovsdb/schema';
import { ovnSchemaPaths } from '../support/ovn-schemas';
import { makePki, OvsdbServer } from '../support/ovsdb-server';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NB_SELECTION, portGroupWithAclsOps } from './nb-helpers';

describe('ssl: remotes against ovsdb-server with a PKI made by openssl at set-up', () => {
  let server: OvsdbServer;

  beforeAll(async () => {
    server = await OvsdbServer.start({ schema: (await ovnSchemaPaths()).nb, ssl: true });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('connects with the client key and certificate, verifies the server against the CA, and monitors', async () => {
    const pki = server.pki!;
    const client = await OvsdbClient.connect(server.sslRemote, { ssl: { key: pki.clientKey, cert: pki.clientCert, ca: pki.caCert } });
    try {
      await client.transact('OVN_Northbound', portGroupWithAclsOps('pg_ssl', 2, 1));
      const cache = new TableCache(await loadSchemaFile((await ovnSchemaPaths()).nb), NB_SELECTION);
      await client.monitor('OVN_Northbound', cache);
      expect(cache.table('Sample').lookup('metadata', 2)).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  it('accepts PEM contents instead of paths', async () => {
    const pki = server.pki!;
    const [key, cert, ca] = await Promise.all([readFile(pki.clientKey), readFile(pki.clientCert), readFile(pki.caCert)]);
    const client = await OvsdbClient.connect(server.sslRemote, { ssl: { key, cert, ca } });
    await client.close();
  });

  it('refuses a server whose certificate another CA signed', async () => {
    const pki = server.pki!;
    const attempt = OvsdbClient.connect(server.sslRemote, {
      ssl: { key: pki.clientKey, cert: pki.clientCert, ca: pki.otherCaCert },
      connectTimeoutMs: 1000,
      backoff: { initialMs: 50 },
    });
    await expect(attempt).rejects.toBeInstanceOf(OvsdbConnectionError);
    await expect(attempt).rejects.toThrow(/certificate/i);
    await expect(attempt).rejects.toThrow(/not signed by options\.ssl\.ca|a CA other than options\.ssl\.ca/);
  });

  it('says so when the server demands a client certificate the client lacks', async () => {
    const pki = server.pki!;
    const attempt = OvsdbClient.connect(server.sslRemote, { ssl: { ca: pki.caCert }, connectTimeoutMs: 1000, backoff: { initialMs: 50 } });
    await expect(attempt).rejects.toBeInstanceOf(OvsdbConnectionError);
    await expect(attempt).rejects.toThrow(
      `${server.sslRemote}: The OVSDB connection failed: TLS: the server demands a client certificate: pass options.ssl.key and options.ssl.cert (ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED)`,
    );
  });

  it('says so when the server does not trust the client certificate', async () => {
    const pki = server.pki!;
    const stranger = await makePki(mkdtempSync(join(tmpdir(), 'ovn-psample-stranger-pki-')));
    const attempt = OvsdbClient.connect(server.sslRemote, {
      ssl: { key: stranger.clientKey, cert: stranger.clientCert, ca: pki.caCert },
      connectTimeoutMs: 1000,
      backoff: { initialMs: 50 },
    });
    await expect(attempt).rejects.toBeInstanceOf(OvsdbConnectionError);
    await expect(attempt).rejects.toThrow(
      `${server.sslRemote}: The OVSDB connection failed: TLS: the server does not trust the client certificate`,
    );
  });

  it('asks for credentials when an ssl: remote has none', async () => {
    await expect(OvsdbClient.connect(server.sslRemote, { connectTimeoutMs: 300 })).rejects.toThrow(/needs TLS credentials/);
  });
});
