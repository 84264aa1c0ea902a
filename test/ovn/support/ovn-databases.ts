import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OvsdbClient } from '../../../src/ovsdb/client';
import { ovnSchemaPaths } from '../../support/ovn-schemas';
import { makePki, OvsdbServer, type Pki } from '../../support/ovsdb-server';

/** A real NB and a real SB ovsdb-server on the OVN 25.03 schemas, with a writer client on each. */
export interface OvnDatabases {
  readonly nb: OvsdbServer;
  readonly sb: OvsdbServer;
  readonly nbWriter: OvsdbClient;
  readonly sbWriter: OvsdbClient;
  /** With `ssl`: the PKI both servers use (also listening on `sslRemote`). */
  readonly pki: Pki | undefined;
  stop(): Promise<void>;
}

export async function startOvnDatabases(options: { ssl?: boolean } = {}): Promise<OvnDatabases> {
  const schemas = await ovnSchemaPaths();
  // One CA for both, as on a node: ovn-nbctl and ovn-sbctl take the same three files.
  const pkiDir = options.ssl === true ? mkdtempSync(join(tmpdir(), 'ovn-psample-pki-')) : undefined;
  const pki = pkiDir === undefined ? undefined : await makePki(pkiDir);
  const nb = await OvsdbServer.start({ schema: schemas.nb, ...(pki === undefined ? {} : { ssl: pki }) });
  const sb = await OvsdbServer.start({ schema: schemas.sb, ...(pki === undefined ? {} : { ssl: pki }) });
  const nbWriter = await OvsdbClient.connect(nb.unixRemote);
  const sbWriter = await OvsdbClient.connect(sb.unixRemote);
  return {
    nb,
    sb,
    nbWriter,
    sbWriter,
    pki,
    async stop() {
      await Promise.all([nbWriter.close(), sbWriter.close()]);
      await Promise.all([nb.stop(), sb.stop()]);
      if (pkiDir !== undefined) rmSync(pkiDir, { recursive: true, force: true });
    },
  };
}

/**
 * Waits until `check` stops throwing: a change committed by one client reaches another client's
 * monitor asynchronously. Fails with the last assertion error if it never converges.
 */
export async function eventually<T>(check: () => T | Promise<T>, what = 'the monitored databases to converge'): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) {
        throw new Error(`Gave up waiting for ${what}`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}
