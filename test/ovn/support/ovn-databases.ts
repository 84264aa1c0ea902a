import { OvsdbClient } from '../../../src/ovsdb/client';
import { ovnSchemaPaths } from '../../support/ovn-schemas';
import { OvsdbServer } from '../../support/ovsdb-server';

/** A real NB and a real SB ovsdb-server on the OVN 25.03 schemas, with a writer client on each. */
export interface OvnDatabases {
  readonly nb: OvsdbServer;
  readonly sb: OvsdbServer;
  readonly nbWriter: OvsdbClient;
  readonly sbWriter: OvsdbClient;
  stop(): Promise<void>;
}

export async function startOvnDatabases(): Promise<OvnDatabases> {
  const schemas = await ovnSchemaPaths();
  const nb = await OvsdbServer.start({ schema: schemas.nb });
  const sb = await OvsdbServer.start({ schema: schemas.sb });
  const nbWriter = await OvsdbClient.connect(nb.unixRemote);
  const sbWriter = await OvsdbClient.connect(sb.unixRemote);
  return {
    nb,
    sb,
    nbWriter,
    sbWriter,
    async stop() {
      await Promise.all([nbWriter.close(), sbWriter.close()]);
      await Promise.all([nb.stop(), sb.stop()]);
    },
  };
}

/**
 * Waits until `check` stops throwing: a change committed by one client reaches another client's
 * monitor asynchronously. Fails with the last assertion error if it never converges.
 */
export async function eventually<T>(check: () => T, what = 'the monitored databases to converge'): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      return check();
    } catch (error) {
      if (Date.now() > deadline) {
        throw new Error(`Gave up waiting for ${what}`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}
