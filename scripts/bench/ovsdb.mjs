// npm run bench:ovsdb [-- --acls N --flows F --pods P --repetitions R --dist DIR --baseline DIR]   (after npm run build)
//
// An OVN 25.03 northbound database with N ACLs (default 100,000), each with its own Sample, in
// port groups of 1,000, and P pods (default 20,000) as ovn-kubernetes writes them (a
// Logical_Switch_Port each, 100 to a node switch, with the node's management port), and a
// southbound one with F logical flows (default 100,000) over 100 datapaths, shaped like
// ovn-northd's, each served by a real ovsdb-server on a unix socket. Each repetition runs
// `ovsdb-client dump` of the whole NB and a fresh process that syncs OvnSampleDecoder's
// selection of it, alternately, so both see the same machine load; medians are compared.
// Reported: sync time ratio (goal <= 1.5), RSS after sync (goal <= 300 MB), decode cost per
// sample (goal <= 1 us amortized), the time for a change of 1,000 ACLs to reach the cache, the
// time a full resync of the NB mirror takes on a live session, the RSS and heap of a decoder
// mirroring both NB and SB (what `listen --nb --sb` holds), and of the OVN session of `watch`
// (decoder and pod directory started together on one client per database) with the number of
// NB monitors it holds. --dist DIR measures another build (an older commit's dist/) against the
// same databases; --baseline DIR measures another build too, each measurement alternately with
// this one, and prints this build's figures over the baseline's. The last line is the verdict:
//   RESULT sync_ratio=R rss_mb=M decode_ns=N nb_sb_rss_mb=M nb_sb_heap_mb=H session_rss_mb=M session_heap_mb=H session_nb_monitors=K
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
    flows: { type: 'string', default: '100000' },
    pods: { type: 'string', default: '20000' },
    repetitions: { type: 'string', default: '3' },
    dist: { type: 'string', default: join(projectRoot, 'dist') },
    baseline: { type: 'string' },
  },
});
const aclCount = Number(options.acls);
const flowCount = Number(options.flows);
const podCount = Number(options.pods);
const PODS_PER_NODE = 100;
const DATAPATHS = 100;
const repetitions = Number(options.repetitions);
const distDir = options.dist;
if (!existsSync(join(distDir, 'ovn', 'decoder.js'))) {
  console.error(`${distDir}/ovn/decoder.js is missing: run \`npm run build\` first, then \`npm run bench:ovsdb\`.`);
  process.exit(1);
}
for (const [flag, count, unit] of [
  ['acls', aclCount, ACLS_PER_PORT_GROUP],
  ['flows', flowCount, ACLS_PER_PORT_GROUP],
  ['pods', podCount, PODS_PER_NODE],
]) {
  if (!Number.isInteger(count) || count < unit || count % unit !== 0) {
    console.error(`--${flag} ${options[flag]}: give a multiple of ${unit}.`);
    process.exit(1);
  }
}
for (const dist of [distDir, options.baseline].filter((dir) => dir !== undefined)) {
  if (!existsSync(join(dist, 'ovn', 'pod-directory.js'))) {
    console.error(`${dist}/ovn/pod-directory.js is missing: give the dist/ of a build of this project.`);
    process.exit(1);
  }
}

/** The real schemas from Debian trixie's ovn-central, fetched once like the tests do. */
function schemaPaths() {
  const cache = process.env.OVN_PSAMPLE_CACHE ?? join(projectRoot, 'node_modules', '.cache', 'ovn-psample');
  const dir = join(cache, `ovn-schemas-${OVN_RELEASE}`);
  mkdirSync(cache, { recursive: true });
  execFileSync(
    'flock',
    [
      join(cache, 'apt.lock'),
      'sh',
      join(projectRoot, 'test', 'support', 'fetch-ovn-schemas.sh'),
      join(cache, 'apt-trixie'),
      dir,
      OVN_RELEASE,
    ],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  return { nb: join(dir, 'ovn-nb.ovsschema'), sb: join(dir, 'ovn-sb.ovsschema') };
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
        external_ids: [
          'map',
          [
            ['k8s.ovn.org/name', `namespace${n % 200}:policy${n % 5000}`],
            ['k8s.ovn.org/owner-type', 'NetworkPolicy'],
            ['k8s.ovn.org/owner-controller', 'default-network-controller'],
            ['k8s.ovn.org/id', `default-network-controller:NetworkPolicy:namespace${n % 200}:policy${n % 5000}:Ingress:${n}`],
          ],
        ],
      },
      'uuid-name': `a${i}`,
    });
    acls.push(['named-uuid', `a${i}`]);
  }
  ops.push({ op: 'insert', table: 'Port_Group', row: { name: `pg${group}`, acls: ['set', acls] } });
  return ops;
}

/**
 * One node's switch as ovn-kubernetes writes it: its subnet, PODS_PER_NODE pod ports (name
 * <namespace>_<pod>, "MAC IP" addresses, external_ids namespace and pod=true) and the management
 * port k8s-<node>.
 */
function nodeSwitchOps(node) {
  const ports = [];
  const ops = [];
  for (let i = 0; i < PODS_PER_NODE; i++) {
    const n = node * PODS_PER_NODE + i;
    const ip = `10.${128 + ((node >> 8) & 127)}.${node & 255}.${i + 3}`;
    const mac = `0a:58:${(node >> 8).toString(16).padStart(2, '0')}:${(node & 255).toString(16).padStart(2, '0')}:00:${(i + 3).toString(16).padStart(2, '0')}`;
    ops.push({
      op: 'insert',
      table: 'Logical_Switch_Port',
      'uuid-name': `p${i}`,
      row: {
        name: `namespace${n % 200}_pod-${n}`,
        addresses: `${mac} ${ip}`,
        external_ids: [
          'map',
          [
            ['namespace', `namespace${n % 200}`],
            ['pod', 'true'],
          ],
        ],
      },
    });
    ports.push(['named-uuid', `p${i}`]);
  }
  ops.push({
    op: 'insert',
    table: 'Logical_Switch_Port',
    'uuid-name': 'mgmt',
    row: { name: `k8s-node-${node}`, addresses: `0a:58:00:00:00:02 10.${128 + ((node >> 8) & 127)}.${node & 255}.2` },
  });
  ports.push(['named-uuid', 'mgmt']);
  ops.push({
    op: 'insert',
    table: 'Logical_Switch',
    row: {
      name: `node-${node}`,
      ports: ['set', ports],
      other_config: ['map', [['subnet', `10.${128 + ((node >> 8) & 127)}.${node & 255}.0/24`]]],
    },
  });
  return ops;
}

/** Logical flows as ovn-northd writes them: a stage, its source line, a match, actions, a stage-hint for some. */
const STAGES = [
  ['ingress', 0, 'ls_in_check_port_sec', 'reg0[15] = check_in_port_sec(); next;'],
  ['ingress', 9, 'ls_in_acl_eval', 'reg8[16] = 1; reg8[17] = 1; next;'],
  ['ingress', 13, 'ls_in_acl_action', 'reg8[16] = 0; reg8[17] = 0; reg8[18] = 0; next(pipeline=ingress, table=14);'],
  ['ingress', 27, 'ls_in_l2_lkup', 'outport = "PORT"; output;'],
  ['egress', 4, 'ls_out_acl_eval', 'reg8[16] = 1; reg0[1] = 1; next;'],
  ['egress', 9, 'ls_out_check_port_sec', 'sample(probability=65535,collector_set=42,obs_domain=1,obs_point=$cookie); /* drop */'],
];

function logicalFlowOps(batch, datapathUuids) {
  const ops = [];
  for (let i = 0; i < ACLS_PER_PORT_GROUP; i++) {
    const n = batch * ACLS_PER_PORT_GROUP + i;
    const [pipeline, tableId, stage, actions] = STAGES[n % STAGES.length];
    const port = `ns${n % 200}_pod-${n.toString(36)}`;
    const externalIds = [
      ['stage-name', stage],
      ['source', `northd.c:${5000 + (n % 900)}`],
    ];
    if (n % 4 === 0) {
      externalIds.push(['stage-hint', (0x10000000 + n).toString(16)]);
    }
    ops.push({
      op: 'insert',
      table: 'Logical_Flow',
      row: {
        logical_datapath: ['uuid', datapathUuids[n % DATAPATHS]],
        pipeline,
        table_id: tableId,
        priority: 1000 + (n % 1000),
        match: `inport == "${port}" && eth.src == {0a:58:0a:f4:${((n >> 8) & 255).toString(16).padStart(2, '0')}:${(n & 255).toString(16).padStart(2, '0')}} && ip4.src == {10.244.${(n >> 8) & 255}.${n & 255}}`,
        actions: actions.replace('PORT', port),
        external_ids: ['map', externalIds],
      },
    });
  }
  return ops;
}

function datapathOps() {
  return Array.from({ length: DATAPATHS }, (_, d) => ({
    op: 'insert',
    table: 'Datapath_Binding',
    row: {
      tunnel_key: d + 1,
      external_ids: [
        'map',
        [
          ['name', `node-${d}`],
          ['logical-switch', `00000000-0000-4000-8000-${String(d).padStart(12, '0')}`],
        ],
      ],
    },
  }));
}

async function startServer(name, schema) {
  const socket = join(dir, `${name}.sock`);
  execFileSync('ovsdb-tool', ['create', join(dir, `${name}.db`), schema]);
  const child = spawn(
    'ovsdb-server',
    [
      join(dir, `${name}.db`),
      `--remote=punix:${socket}`,
      `--unixctl=${join(dir, `${name}.ctl`)}`,
      `--log-file=${join(dir, `${name}.log`)}`,
      '-vconsole:off',
    ],
    {
      stdio: 'ignore',
    },
  );
  servers.push(child);
  await waitForSocket(socket, child);
  return socket;
}

function timeDump(socket) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const dump = spawn('ovsdb-client', ['dump', `unix:${socket}`, 'OVN_Northbound'], { stdio: ['ignore', 'ignore', 'inherit'] });
    dump.on('error', reject);
    dump.on('close', (code) =>
      code === 0 ? resolve(Number(process.hrtime.bigint() - started) / 1e6) : reject(new Error(`ovsdb-client dump exited with ${code}`)),
    );
  });
}

const dir = mkdtempSync(join(tmpdir(), 'ovn-psample-bench-ovsdb-'));
const servers = [];
const cleanUp = () => {
  for (const server of servers) server.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
};
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    cleanUp();
    process.exit(1);
  });
}
try {
  const schemas = schemaPaths();
  const socket = await startServer('nb', schemas.nb);
  const sbSocket = await startServer('sb', schemas.sb);

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
  for (let node = 0; node < podCount / PODS_PER_NODE; node++) {
    await writer.transact('OVN_Northbound', nodeSwitchOps(node));
  }
  await writer.close();
  console.log(
    `database: ${aclCount} ACLs + ${aclCount} Samples in ${aclCount / ACLS_PER_PORT_GROUP} port groups, ${podCount} pods on ${podCount / PODS_PER_NODE} node switches, written in ${(Number(process.hrtime.bigint() - populateStarted) / 1e9).toFixed(1)} s`,
  );
  const sbWriter = await OvsdbClient.connect(`unix:${sbSocket}`);
  const sbStarted = process.hrtime.bigint();
  const datapathUuids = (await sbWriter.transact('OVN_Southbound', datapathOps())).map((result) => result.uuid[1]);
  for (let batch = 0; batch < flowCount / ACLS_PER_PORT_GROUP; batch++) {
    await sbWriter.transact('OVN_Southbound', logicalFlowOps(batch, datapathUuids));
  }
  await sbWriter.close();
  console.log(
    `southbound: ${flowCount} Logical_Flows over ${DATAPATHS} datapaths, written in ${(Number(process.hrtime.bigint() - sbStarted) / 1e9).toFixed(1)} s`,
  );

  const builds = [
    { name: 'this build', dist: distDir },
    ...(options.baseline === undefined ? [] : [{ name: 'baseline', dist: options.baseline }]),
  ];
  const measureSync = (dist, runIndex, mode) =>
    runToCompletion(process.execPath, [
      join(benchDir, 'lib', 'ovsdb-sync.mjs'),
      dist,
      `unix:${socket}`,
      String(ACL_NEW_APP_ID),
      String(runIndex),
      String(aclCount),
      ...(mode === undefined ? [] : [mode]),
    ]);
  const measureMirrors = (dist) =>
    runToCompletion(process.execPath, [
      '--expose-gc',
      join(benchDir, 'lib', 'ovsdb-mirrors.mjs'),
      dist,
      `unix:${socket}`,
      `unix:${sbSocket}`,
    ]);
  const measureSession = (dist) =>
    runToCompletion(process.execPath, [
      '--expose-gc',
      join(benchDir, 'lib', 'ovsdb-session.mjs'),
      dist,
      `unix:${socket}`,
      `unix:${sbSocket}`,
      join(dir, 'nb.ctl'),
    ]);
  const dumps = [];
  const figures = builds.map(() => ({ syncs: [], mirrors: [], sessions: [] }));
  for (let r = 0; r < repetitions; r++) {
    dumps.push(await timeDump(socket));
    for (const [b, { name, dist }] of builds.entries()) {
      // Each sync changes its own 1,000 ACLs.
      const sync = await measureSync(dist, r * builds.length + b);
      figures[b].syncs.push(sync);
      console.log(
        `run ${r + 1}, ${name}: dump ${dumps.at(-1).toFixed(0)} ms | sync ${sync.syncMs.toFixed(0)} ms, ${sync.rows} rows, rss ${sync.rssMb.toFixed(0)} MB, decode ${sync.decodeNs.toFixed(0)} ns, 1,000-ACL change ${sync.changeMs.toFixed(0)} ms`,
      );
    }
  }
  for (let r = 0; r < repetitions; r++) {
    for (const [b, { name, dist }] of builds.entries()) {
      const mirrors = await measureMirrors(dist);
      figures[b].mirrors.push(mirrors);
      console.log(
        `NB+SB mirrors ${r + 1}, ${name}: synced in ${mirrors.syncMs.toFixed(0)} ms, rss ${mirrors.rssMb.toFixed(0)} MB, heap ${mirrors.heapMb.toFixed(0)} MB (of ${mirrors.heapTotalMb.toFixed(0)} MB reserved), external ${mirrors.externalMb.toFixed(0)} MB`,
      );
      const session = await measureSession(dist);
      figures[b].sessions.push(session);
      console.log(
        `watch's OVN session ${r + 1}, ${name}: synced in ${session.syncMs.toFixed(0)} ms, rss ${session.rssMb.toFixed(0)} MB, heap ${session.heapMb.toFixed(0)} MB, ${session.nbMonitors} NB monitors, ${session.pods} pod addresses`,
      );
    }
  }
  const cacheOnly = await measureSync(distDir, 0, 'cache-only');
  console.log(`TableCache alone (no decoder): sync ${cacheOnly.syncMs.toFixed(0)} ms, rss ${cacheOnly.rssMb.toFixed(0)} MB`);
  const dumpMs = median(dumps);
  const medians = figures.map(({ syncs, mirrors, sessions }) => {
    const resyncs = syncs.map((run) => run.resyncMs).filter((ms) => ms !== null);
    return {
      syncMs: median(syncs.map((run) => run.syncMs)),
      rssMb: median(syncs.map((run) => run.rssMb)),
      decodeNs: median(syncs.map((run) => run.decodeNs)),
      changeMs: median(syncs.map((run) => run.changeMs)),
      resyncMs: resyncs.length === 0 ? undefined : median(resyncs),
      nbSbRssMb: median(mirrors.map((run) => run.rssMb)),
      nbSbHeapMb: median(mirrors.map((run) => run.heapMb)),
      sessionSyncMs: median(sessions.map((run) => run.syncMs)),
      sessionRssMb: median(sessions.map((run) => run.rssMb)),
      sessionHeapMb: median(sessions.map((run) => run.heapMb)),
      sessionMonitors: median(sessions.map((run) => run.nbMonitors)),
    };
  });
  for (const [b, { name }] of builds.entries()) {
    const m = medians[b];
    console.log(
      `median, ${name}: ovsdb-client dump ${dumpMs.toFixed(0)} ms, OvnSampleDecoder sync ${m.syncMs.toFixed(0)} ms (goal ratio <= 1.5)`,
    );
    console.log(
      `median, ${name}: rss after sync ${m.rssMb.toFixed(0)} MB (goal <= 300), decode ${m.decodeNs.toFixed(0)} ns/sample (goal <= 1000), 1,000-ACL change reflected in ${m.changeMs.toFixed(0)} ms`,
    );
    console.log(
      `median, ${name}: full resync of the ${aclCount}-ACL NB mirror on a live session ${m.resyncMs === undefined ? 'n/a (this build does not resync)' : `${m.resyncMs.toFixed(0)} ms`}`,
    );
    console.log(
      `median, ${name}: NB (${aclCount} ACLs, ${podCount} pods) + SB (${flowCount} logical flows) mirrors of one decoder: rss ${m.nbSbRssMb.toFixed(0)} MB, heap ${m.nbSbHeapMb.toFixed(0)} MB`,
    );
    console.log(
      `median, ${name}: watch's OVN session (decoder and pods): synced in ${m.sessionSyncMs.toFixed(0)} ms, rss ${m.sessionRssMb.toFixed(0)} MB, heap ${m.sessionHeapMb.toFixed(0)} MB, ${m.sessionMonitors} NB monitors`,
    );
  }
  if (builds.length > 1) {
    const [ours, base] = medians;
    const ratio = (key) => (ours[key] / base[key]).toFixed(2);
    console.log(
      `this build / baseline: sync ${ratio('syncMs')}, rss ${ratio('rssMb')}, decode ${ratio('decodeNs')}, NB+SB rss ${ratio('nbSbRssMb')}, heap ${ratio('nbSbHeapMb')}, session sync ${ratio('sessionSyncMs')}, rss ${ratio('sessionRssMb')}, heap ${ratio('sessionHeapMb')}`,
    );
  }
  const [m] = medians;
  console.log(
    `RESULT sync_ratio=${(m.syncMs / dumpMs).toFixed(2)} rss_mb=${m.rssMb.toFixed(0)} decode_ns=${m.decodeNs.toFixed(0)} nb_sb_rss_mb=${m.nbSbRssMb.toFixed(0)} nb_sb_heap_mb=${m.nbSbHeapMb.toFixed(0)} session_rss_mb=${m.sessionRssMb.toFixed(0)} session_heap_mb=${m.sessionHeapMb.toFixed(0)} session_nb_monitors=${m.sessionMonitors}`,
  );
} finally {
  cleanUp();
}
