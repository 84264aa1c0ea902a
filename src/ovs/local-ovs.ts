import { TableCache } from '../ovsdb/cache';
import { OvsdbClient, type OvsdbClientOptions } from '../ovsdb/client';
import type { Row } from '../ovsdb/row';
import { OPEN_VSWITCH_DATABASE, vswitchSelection } from './selection';

/** Where ovsdb-server listens for the local Open_vSwitch database (ovs-ctl's default). */
export const DEFAULT_OVS_REMOTE = 'unix:/var/run/openvswitch/db.sock';

export interface LocalOvsOptions {
  /** Connection options for a remote given as a string: timeouts, backoff, ssl. */
  readonly client?: Omit<OvsdbClientOptions, 'database' | 'signal'>;
  readonly signal?: AbortSignal;
}

/**
 * The node's Open_vSwitch database, mirrored live: bridges, datapath capabilities, collector sets
 * and interfaces. Reads are synchronous lookups in the mirror; writes are transactions.
 */
export class LocalOvs {
  readonly client: OvsdbClient;
  readonly cache: TableCache;
  private readonly ownsClient: boolean;

  private constructor(client: OvsdbClient, cache: TableCache, ownsClient: boolean) {
    this.client = client;
    this.cache = cache;
    this.ownsClient = ownsClient;
  }

  /** Connects (or uses a connected client, left open on close()) and waits for the initial sync. */
  static async open(database: OvsdbClient | string, options: LocalOvsOptions = {}): Promise<LocalOvs> {
    const ownsClient = !(database instanceof OvsdbClient);
    const client =
      database instanceof OvsdbClient
        ? database
        : await OvsdbClient.connect(database, {
            ...options.client,
            database: OPEN_VSWITCH_DATABASE,
            ...(options.signal === undefined ? {} : { signal: options.signal }),
          });
    try {
      const schema = await client.getSchema(OPEN_VSWITCH_DATABASE);
      const cache = new TableCache(schema, vswitchSelection(schema));
      await client.monitor(OPEN_VSWITCH_DATABASE, cache);
      return new LocalOvs(client, cache, ownsClient);
    } catch (error) {
      if (ownsClient) await client.close();
      throw error;
    }
  }

  bridge(name: string): Row | undefined {
    return this.cache.table('Bridge').lookup('name', name)[0];
  }

  /** The single Open_vSwitch row (absent until ovs-vsctl init has run). */
  root(): Row | undefined {
    return this.cache.table('Open_vSwitch').values().next().value as Row | undefined;
  }

  transact(operations: readonly unknown[]): Promise<unknown[]> {
    return this.client.transact(OPEN_VSWITCH_DATABASE, operations);
  }

  async close(): Promise<void> {
    if (this.ownsClient) await this.client.close();
    else await this.client.unmonitor(this.cache);
  }
}
