import { describe, expect, it } from 'vitest';
import { TableCache } from '../../src/ovsdb/cache';
import { OvsdbClient } from '../../src/ovsdb/client';
import { cacheContent, portGroupWithAclsOps, serverContent, startBusyWriter, useNbServer, wholeRowSelection } from './nb-helpers';

const NB = 'OVN_Northbound';
const MIRRORS = 8;

/** Polls until the mirror equals the server, or returns the last difference after `ms`. */
async function converge(cache: TableCache, reader: OvsdbClient, ms: number): Promise<{ mirror: unknown; server: unknown }> {
  const deadline = Date.now() + ms;
  for (;;) {
    const server = await serverContent(reader, cache);
    const mirror = cacheContent(cache);
    if (JSON.stringify(mirror) === JSON.stringify(server) || Date.now() > deadline) {
      return { mirror, server };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('mirrors started while a writer commits continuously (real ovsdb-server, OVN 25.03 NB)', () => {
  const fixture = useNbServer(async (seed) => {
    for (let group = 0; group < 10; group++) {
      await seed.transact(NB, portGroupWithAclsOps(`pg_seed${group}`, 200, 1 + group * 200));
    }
  });
  const { clients } = fixture;

  it(`all ${MIRRORS} mirrors end equal to the server, every row and column`, async () => {
    const { server, schema } = fixture;
    const writerClients = await Promise.all([0, 1].map(() => OvsdbClient.connect(server.unixRemote)));
    clients.push(...writerClients);
    const writers = writerClients.map((client, index) => startBusyWriter(client, `pg_busy${index}`, 1_000_000 * (index + 1)));
    const selection = wholeRowSelection(schema, ['ACL', 'Sample', 'Port_Group']);
    const mirrors: { client: OvsdbClient; cache: TableCache }[] = [];
    for (let index = 0; index < MIRRORS; index++) {
      const client = await OvsdbClient.connect(index % 2 === 0 ? server.unixRemote : server.tcpRemote);
      clients.push(client);
      const cache = new TableCache(schema, selection);
      await client.monitor(NB, cache);
      mirrors.push({ client, cache });
    }
    const commits = await Promise.all(writers.map((writer) => writer.stop()));
    expect(commits.reduce((sum, count) => sum + count, 0)).toBeGreaterThan(MIRRORS);

    const outcomes = await Promise.all(mirrors.map(({ cache }) => converge(cache, writerClients[0]!, 5000)));
    const converged = outcomes.filter(({ mirror, server: served }) => JSON.stringify(mirror) === JSON.stringify(served)).length;
    expect(converged, `${converged}/${MIRRORS} mirrors converged`).toBe(MIRRORS);
    for (const { mirror, server: served } of outcomes) {
      expect(mirror).toEqual(served);
    }
  });
});
