// npm run bench:ovsdb [-- --acls N --repetitions R --dist DIR]   (after npm run build)
//
// An OVN 25.03 northbound database with N ACLs (default 100,000), each with its own Sample, in
// port groups of 1,000, served by a real ovsdb-server on a unix socket. Each repetition runs
// `ovsdb-client dump` of the whole database and a fresh process that syncs OvnSampleDecoder's
// selection of it, alternately, so both see the same machine load; medians are compared.
// Reported: sync time ratio (goal <= 1.5), RSS after sync (goal <= 300 MB), decode cost per
// sample (goal <= 1 us amortized) and the time for a change of 1,000 ACLs to reach the cache.
// The last line is the verdict:
//   RESULT sync_ratio=R rss_mb=M decode_ns=N
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { runToCompletion } from './lib/child.mjs';
import { median } from './lib/percentiles.mjs';

const benchDir = dirname(fileURLToPath(import.meta.url));
const projectRoot = join(benchDir, '..', '..');
const OVN_RELEASE = '25.03';
const ACLS_PER_PORT_GROUP = 1000;
const ACL_NEW_APP_ID = 2;

const { values: options } = parseArgs({
  options: {
    acls: { type: 'string', default: '100000' },
    repetitions: { type: 'string', default: '3' },
    dist: { type: 'string', default: join(projectRoot, 'dist') },
  },
});
const aclCount = Number(options.acls);
const repetitions = Number(options.repetitions);
const distDir = options.dist;
if (!existsSync(join(distDir, 'ovn', 'decoder.js'))) {
  console.error(`${distDir}/ovn/decoder.js is missing: run \`npm run build\` first, then \`npm run bench:ovsdb\`.`);
  process.exit(1);
}
if (!Number.isInteger(aclCount) || aclCount < ACLS_PER_PORT_GROUP || aclCount % ACLS_PER_PORT_GROUP !== 0) {
  console.error(`--acls ${options.acls}: give a multiple of ${ACLS_PER_PORT_GROUP}.`);
  process.exit(1);
}

/** The real schema from Debian trixie's ovn-central, fetched once like the tests do. */
function nbSchemaPath() {
  const cache = process.env.OVN_PSAMPLE_CACHE ?? join(projectRoot, 'node_modules', '.cache', 'ovn-psample');
  const dir = join(cache, `ovn-schemas-${OVN_RELEASE}`);
  mkdirSync(cache, { recursive: true });
  execFileSync('flock', [join(cache, 'apt.lock'), 'sh', join(projectRoot, 'test', 'support', 'fetch-ovn-schemas.sh'), join(cache, 'apt-trixie'), dir, OVN_RELEASE], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return join(dir, 'ovn-nb.ovsschema');
}

async function waitForSocket(path, server) {
  for (;;) {
    if (server.exitCode !== null) {
      throw new Error(`ovsdb-server exited with ${server.exitCode} during start-up`);
    }
    const up = await new Promise((resolve) => {
      const socket = connect({ path });
      socket.once('connect', () => resolve(socket.destroy() && true));
      socket.once('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function portGroupOps(group) {
  const ops = [];
  const acls = [];
  for (let i = 0; i < ACLS_PER_PORT_GROUP; i++) {
    const n = group * ACLS_PER_PORT_GROUP + i;
    ops.push({ op: 'insert', table: 'Sample', row: { metadata: n + 1 }, 'uuid-name': `s${i}` });
    ops.push({
      op: 'insert',
      table: 'ACL',
      row: {
        action: n % 3 === 0 ? 'drop' : 'allow-related',
        direction: n % 2 === 0 ? 'to-lport' : 'from-lport',
        priority: 1000 + (n % 100),
        match: `outport == @pg${group} && ip4.src == 10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255} && tcp.dst == ${1 + (n % 65535)}`,
        name: `np${n}`,
        sample_new: ['named-uuid', `s${i}`],
        external_ids: ['map', [
          ['k8s.ovn.org/name', `namespace${n % 200}:policy${n % 5000}`],
          ['k8s.ovn.org/owner-type', 'NetworkPolicy'],
          ['k8s.ovn.org/owner-controller', 'default-network-controller'],
          ['k8s.ovn.org/id', `default-network-controller:NetworkPolicy:namespace${n % 200}:policy${n % 5000}:Ingress:${n}`],
        ]],
      },
      'uuid-name': `a${i}`,
    });
    acls.push(['named-uuid', `a${i}`]);
  }
  ops.push({ op: 'insert', table: 'Port_Group', row: { name: `pg${group}`, acls: ['set', acls] } });
  return ops;
}

function timeDump(socket) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const dump = spawn('ovsdb-client', ['dump', `unix:${socket}`, 'OVN_Northbound'], { stdio: ['ignore', 'ignore', 'inherit'] });
    dump.on('error', reject);
    dump.on('close', (code) => (code === 0 ? resolve(Number(process.hrtime.bigint() - started) / 1e6) : reject(new Error(`ovsdb-client dump exited with ${code}`))));
  });
}

const dir = mkdtempSync(join(tmpdir(), 'ovn-psample-bench-ovsdb-'));
const socket = join(dir, 'nb.sock');
let server;
const cleanUp = () => {
  server?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
};
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    cleanUp();
    process.exit(1);
  });
}
try {
  const schema = nbSchemaPath();
  execFileSync('ovsdb-tool', ['create', join(dir, 'nb.db'), schema]);
  server = spawn('ovsdb-server', [join(dir, 'nb.db'), `--remote=punix:${socket}`, `--unixctl=${join(dir, 'ctl')}`, `--log-file=${join(dir, 'log')}`, '-vconsole:off'], {
    stdio: 'ignore',
  });
  await waitForSocket(socket, server);

  const { OvsdbClient } = await import(pathToFileURL(join(distDir, 'ovsdb', 'client.js')).href);
  const writer = await OvsdbClient.connect(`unix:${socket}`);
  const populateStarted = process.hrtime.bigint();
  await writer.transact('OVN_Northbound', [
    { op: 'insert', table: 'Sampling_App', row: { type: 'acl-new', id: ACL_NEW_APP_ID } },
    { op: 'insert', table: 'Sampling_App', row: { type: 'acl-est', id: ACL_NEW_APP_ID + 1 } },
  ]);
  for (let group = 0; group < aclCount / ACLS_PER_PORT_GROUP; group++) {
    await writer.transact('OVN_Northbound', portGroupOps(group));
  }
  await writer.close();
  console.log(`database: ${aclCount} ACLs + ${aclCount} Samples in ${aclCount / ACLS_PER_PORT_GROUP} port groups, written in ${(Number(process.hrtime.bigint() - populateStarted) / 1e9).toFixed(1)} s`);

  const dumps = [];
  const syncs = [];
  for (let r = 0; r < repetitions; r++) {
    dumps.push(await timeDump(socket));
    syncs.push(await runToCompletion(process.execPath, [join(benchDir, 'lib', 'ovsdb-sync.mjs'), distDir, `unix:${socket}`, String(ACL_NEW_APP_ID), String(r), String(aclCount)]));
    const last = syncs.at(-1);
    console.log(
      `run ${r + 1}: dump ${dumps.at(-1).toFixed(0)} ms | sync ${last.syncMs.toFixed(0)} ms, ${last.rows} rows, rss ${last.rssMb.toFixed(0)} MB, decode ${last.decodeNs.toFixed(0)} ns, 1,000-ACL change ${last.changeMs.toFixed(0)} ms`,
    );
  }
  const cacheOnly = await runToCompletion(process.execPath, [join(benchDir, 'lib', 'ovsdb-sync.mjs'), distDir, `unix:${socket}`, String(ACL_NEW_APP_ID), '0', String(aclCount), 'cache-only']);
  console.log(`TableCache alone (no decoder): sync ${cacheOnly.syncMs.toFixed(0)} ms, rss ${cacheOnly.rssMb.toFixed(0)} MB`);
  const dumpMs = median(dumps);
  const syncMs = median(syncs.map((run) => run.syncMs));
  const rssMb = median(syncs.map((run) => run.rssMb));
  const decodeNs = median(syncs.map((run) => run.decodeNs));
  const changeMs = median(syncs.map((run) => run.changeMs));
  console.log(`median: ovsdb-client dump ${dumpMs.toFixed(0)} ms, OvnSampleDecoder sync ${syncMs.toFixed(0)} ms (goal ratio <= 1.5)`);
  console.log(`median: rss after sync ${rssMb.toFixed(0)} MB (goal <= 300), decode ${decodeNs.toFixed(0)} ns/sample (goal <= 1000), 1,000-ACL change reflected in ${changeMs.toFixed(0)} ms`);
  console.log(`RESULT sync_ratio=${(syncMs / dumpMs).toFixed(2)} rss_mb=${rssMb.toFixed(0)} decode_ns=${decodeNs.toFixed(0)}`);
} finally {
  cleanUp();
}
