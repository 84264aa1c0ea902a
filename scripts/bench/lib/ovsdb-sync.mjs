// One measured OvnSampleDecoder sync, in a process of its own so its RSS is its alone.
// Prints one JSON line: syncMs, rssMb, decodeNs, changeMs, resyncMs, rows. With MODE
// "cache-only", the TableCache is synced without a decoder (syncMs, rssMb, rows), to tell the
// two costs apart. resyncMs: a row removed from the cache behind the monitor's back, then
// modified on the server, until the reloaded mirror is synced again (null for a build that
// does not resync).
//   node ovsdb-sync.mjs DIST_DIR REMOTE APP_ID RUN_INDEX METADATA_COUNT [MODE]
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [distDir, remote, appIdText, runIndexText, metadataCountText, mode = 'decoder'] = process.argv.slice(2);
const appId = Number(appIdText);
const runIndex = Number(runIndexText);
const metadataCount = Number(metadataCountText);
const CHANGED_ACLS = 1000;
// A parent killed before it could clean up must not leave this process waiting forever.
setTimeout(() => {
  console.error('ovsdb-sync: gave up after 10 minutes');
  process.exit(2);
}, 600_000).unref();
const load = (path) => import(pathToFileURL(join(distDir, path)).href);
const { OvsdbClient } = await load('ovsdb/client.js');
const { TableCache } = await load('ovsdb/cache.js');
const { OvnSampleDecoder, NORTHBOUND_DATABASE } = await load('ovn/decoder.js');
const { northboundSelection } = await load('ovn/selection.js');

const started = process.hrtime.bigint();
const client = await OvsdbClient.connect(remote);
const schema = await client.getSchema(NORTHBOUND_DATABASE);
const cache = new TableCache(schema, northboundSelection(schema));
// Built before the sync, as OvnSampleDecoder.start() does, so its indexes grow with the cache.
const decoder = mode === 'cache-only' ? undefined : new OvnSampleDecoder({ nbCache: cache });
await client.monitor(NORTHBOUND_DATABASE, cache);
const syncMs = Number(process.hrtime.bigint() - started) / 1e6;
const rssMb = process.memoryUsage().rss / 2 ** 20;
const rows = [...cache.monitoredColumns().keys()].reduce((sum, table) => sum + cache.table(table).size, 0);
if (decoder === undefined) {
  await client.close();
  console.log(JSON.stringify({ syncMs, rssMb, rows }));
  process.exit(0);
}

// Amortized over many samples of distinct ACLs, as a busy node would see them.
const DECODES = 2_000_000;
// With a datapath key, as OVN's ACL samples always have one (key 0 is ovn-controller's own drops).
const obsDomainId = ((appId << 24) | 1) >>> 0;
const points = new Uint32Array(4096).map(() => 1 + Math.floor(Math.random() * metadataCount));
let decoded = 0;
const decodeStarted = process.hrtime.bigint();
for (let i = 0; i < DECODES; i++) {
  if (decoder.decode(obsDomainId, points[i & 4095]).status === 'decoded') {
    decoded++;
  }
}
const decodeNs = Number(process.hrtime.bigint() - decodeStarted) / DECODES;
if (decoded !== DECODES) {
  throw new Error(`only ${decoded} of ${DECODES} samples decoded: the generated database is not what the decoder expects`);
}

// A change of 1,000 ACLs in one transaction (another 1,000 each run), timed until the cache has all of them.
const tag = `bench-${process.pid}`;
const targets = [...cache.table('ACL').values()].slice(runIndex * CHANGED_ACLS, (runIndex + 1) * CHANGED_ACLS).map((acl) => acl._uuid);
if (targets.length !== CHANGED_ACLS) {
  throw new Error(`the database has too few ACLs for run ${runIndex + 1}`);
}
const changed = new Set();
let reflected;
const allReflected = new Promise((resolve) => (reflected = resolve));
cache.on('change', (table, uuid, _old, row) => {
  if (table === 'ACL' && row?.match.endsWith(tag)) {
    changed.add(uuid);
    if (changed.size === CHANGED_ACLS) {
      reflected();
    }
  }
});
const changeStarted = process.hrtime.bigint();
await client.transact(
  NORTHBOUND_DATABASE,
  targets.map((uuid) => ({ op: 'update', table: 'ACL', where: [['_uuid', '==', ['uuid', uuid]]], row: { match: `ip4 && ${tag}` } })),
);
await allReflected;
const changeMs = Number(process.hrtime.bigint() - changeStarted) / 1e6;

let resyncMs = null;
if (client.stats.resyncs !== undefined) {
  const victim = targets[0];
  const resynced = new Promise((resolve) =>
    client.on('status', (status) => status.state === 'synced' && client.stats.resyncs > 0 && resolve()),
  );
  cache.applyUpdate2({ ACL: { [victim]: { delete: null } } });
  const resyncStarted = process.hrtime.bigint();
  await client.transact(NORTHBOUND_DATABASE, [
    { op: 'update', table: 'ACL', where: [['_uuid', '==', ['uuid', victim]]], row: { priority: 1 } },
  ]);
  await resynced;
  resyncMs = Number(process.hrtime.bigint() - resyncStarted) / 1e6;
}
await client.close();
console.log(JSON.stringify({ syncMs, rssMb, decodeNs, changeMs, resyncMs, rows }));
