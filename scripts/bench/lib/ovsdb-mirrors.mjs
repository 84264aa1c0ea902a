// The memory of a decoder's NB+SB mirrors, as `ovn-psample listen --nb --sb` holds them: an
// OvnSampleDecoder connected by remotes, in a process of its own so its RSS is its alone.
// Prints one JSON line: syncMs, rssMb, heapMb (used, after two full GCs; run with --expose-gc),
// heapTotalMb (what V8 keeps reserved for the heap), externalMb (Buffers and other off-heap memory).
//   node --expose-gc ovsdb-mirrors.mjs DIST_DIR NB_REMOTE SB_REMOTE
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [distDir, nbRemote, sbRemote] = process.argv.slice(2);
setTimeout(() => {
  console.error('ovsdb-mirrors: gave up after 10 minutes');
  process.exit(2);
}, 600_000).unref();
const { OvnSampleDecoder } = await import(pathToFileURL(join(distDir, 'ovn', 'decoder.js')).href);

const started = process.hrtime.bigint();
const decoder = new OvnSampleDecoder({ nb: nbRemote, sb: sbRemote });
await decoder.start();
const syncMs = Number(process.hrtime.bigint() - started) / 1e6;
globalThis.gc();
globalThis.gc();
const { rss, heapUsed, heapTotal, external } = process.memoryUsage();
// One drop sample, so the flow directory is exercised as it is in use.
decoder.decode((1 << 24) >>> 0, 1);
await decoder.close();
console.log(
  JSON.stringify({
    syncMs,
    rssMb: rss / 2 ** 20,
    heapMb: heapUsed / 2 ** 20,
    heapTotalMb: heapTotal / 2 ** 20,
    externalMb: external / 2 ** 20,
  }),
);
