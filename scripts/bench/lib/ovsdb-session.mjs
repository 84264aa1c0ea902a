// The OVN session `ovn-psample watch` holds (src/cli/ovn-session.ts): one client per database, an
// OvnSampleDecoder and a PodDirectory started together on them, in a process of its own so its
// RSS is its alone. Written against the public API both an older build and this one have, so
// each is measured doing what its CLI does. Prints one JSON line: syncMs, rssMb, heapMb (used,
// after two full GCs; run with --expose-gc), nbMonitors (the northbound server's monitors while
// the session runs: this process is the server's only client), pods (addresses indexed).
//   node --expose-gc ovsdb-session.mjs DIST_DIR NB_REMOTE SB_REMOTE NB_UNIXCTL
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [distDir, nbRemote, sbRemote, nbUnixctl] = process.argv.slice(2);
setTimeout(() => {
  console.error('ovsdb-session: gave up after 10 minutes');
  process.exit(2);
}, 600_000).unref();
const load = (path) => import(pathToFileURL(join(distDir, path)).href);
const { OvsdbClient } = await load('ovsdb/client.js');
const { OvnSampleDecoder } = await load('ovn/decoder.js');
const { PodDirectory } = await load('ovn/pod-directory.js');

const started = process.hrtime.bigint();
const [nb, sb] = await Promise.all([OvsdbClient.connect(nbRemote), OvsdbClient.connect(sbRemote)]);
const decoder = new OvnSampleDecoder({ nb, sb });
const [pods] = await Promise.all([PodDirectory.follow(nb), decoder.start()]);
const syncMs = Number(process.hrtime.bigint() - started) / 1e6;
globalThis.gc();
globalThis.gc();
const { rss, heapUsed } = process.memoryUsage();
const monitors = /monitors:(\d+)/.exec(execFileSync('ovs-appctl', ['-t', nbUnixctl, 'memory/show'], { encoding: 'utf8' }));
const result = {
  syncMs,
  rssMb: rss / 2 ** 20,
  heapMb: heapUsed / 2 ** 20,
  nbMonitors: monitors === null ? 0 : Number(monitors[1]),
  pods: pods.size,
};
await Promise.all([pods.close(), decoder.close()]);
await Promise.all([nb.close(), sb.close()]);
console.log(JSON.stringify(result));
