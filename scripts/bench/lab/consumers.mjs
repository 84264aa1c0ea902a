// The programs the lab benchmark measures, each reading the same offered load in turn. A consumer
// prints one line per sample to stdout (a file), or with `samplesPerLine` one line per group of
// samples that says how many it holds; says on stderr that it is listening (a line matching
// /listening/) once it has joined psample's group; and stops on SIGTERM. One that writes what it
// holds when it stops (`countsAtExit`) is counted again once it has exited. Adding one is one entry here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The consumer RESULT's ratios, loss and drain are about: what an operator runs on an OVN node. */
export const HEADLINE_CONSUMER = 'json+ovn';
/** The consumer of RESULT's watch_* figures: the samples of one packet grouped, pods named. */
export const WATCH_CONSUMER = 'watch';
/** The consumer of RESULT's agent_* figures: what the DaemonSet runs, watch --aggregate with metrics. */
export const AGENT_CONSUMER = 'agent';
export const REFERENCE_CONSUMER = 'c';
// Per scenario; text+ovn only on request: text costs about what json does, and each run of an
// ovn-psample consumer that cannot keep up waits out the drain cap.
export const DEFAULT_CONSUMERS = {
  tc: ['c', 'json', 'text', 'json+ovn', 'watch', 'watch-human'],
  ovn: ['c', 'json', 'json+ovn', 'watch', 'watch-human', 'agent'],
};

// `listen` attaches the OVN decoder on its own when the node has ovn-central's default sockets
// (/var/run/ovn/ovnnb_db.sock): without an OVN decoder means without those sockets, so they are
// covered by an empty tmpfs in a mount namespace of the consumer's own. exec keeps the pid.
const HIDE_OVN_SOCKETS = 'if [ -d /var/run/ovn ]; then mount -t tmpfs -o size=64k ovn-hidden /var/run/ovn || exit 1; fi; exec "$@"';
function withoutOvnSockets(argv) {
  return ['unshare', '--mount', '--propagation', 'private', '--', 'sh', '-c', HIDE_OVN_SOCKETS, 'hide-ovn', ...argv];
}

/** Node's options on the CLI's '#!/usr/bin/env -S node …' line: what its bin runs with. */
function binNodeOptions(main) {
  const shebang = readFileSync(main, 'utf8').split('\n', 1)[0];
  const options = /^#!\/usr\/bin\/env -S node\b(.*)$/.exec(shebang)?.[1].trim();
  return options ? options.split(/\s+/) : [];
}

/** The CLI as an operator runs it (node with its bin's options), the benchmark's node options after them. */
function cli(ctx, ...args) {
  const main = join(ctx.project, 'dist', 'cli', 'main.js');
  return [process.execPath, ...binNodeOptions(main), ...ctx.nodeArgs, main, ...args];
}

function listen(ctx, ...args) {
  return cli(ctx, 'listen', '--group', String(ctx.group), ...args);
}

// What an operator runs: samples of one packet grouped into one event, pods named, logs as JSON.
function watch(ctx, format = 'json') {
  return cli(
    ctx,
    'watch',
    '--group',
    String(ctx.group),
    '--format',
    format,
    '--nb',
    ctx.northbound,
    '--sb',
    ctx.southbound,
    '--log-format',
    'json',
  );
}

// The DaemonSet's args (deploy/base/daemonset.yaml) but the collector set and the privileges, which
// the benchmark's node has set up: a record per flow and interval, Prometheus metrics observed per
// packet. Intervals of 1 s rather than its 60: the burst's records are written within the run.
function agent(ctx) {
  return cli(
    ctx,
    'watch',
    '--group',
    String(ctx.group),
    '--aggregate',
    '1',
    '--metrics',
    '127.0.0.1:9479',
    '--nb',
    ctx.northbound,
    '--sb',
    ctx.southbound,
    '--log-format',
    'json',
  );
}

/** ctx: { group, project, tools, northbound, southbound, nodeArgs (node options for ovn-psample) } */
export const CONSUMERS = [
  {
    name: 'c',
    title: "C reader (psample-print: one recv and one printf per sample, like libpsample's psample CLI)",
    argv: (ctx) => [join(ctx.tools, 'psample-print'), '--group', String(ctx.group)],
  },
  {
    name: 'c-long',
    title: 'the C reader, each line padded with 1,700 bytes: as much output per sample as json+ovn writes (on request)',
    argv: (ctx) => [join(ctx.tools, 'psample-print'), '--group', String(ctx.group), '--pad', '1700'],
  },
  {
    name: 'json',
    title: 'ovn-psample listen --format json (no OVN decoder)',
    argv: (ctx) => withoutOvnSockets(listen(ctx, '--format', 'json')),
  },
  {
    name: 'text',
    title: 'ovn-psample listen --format text (no OVN decoder)',
    argv: (ctx) => withoutOvnSockets(listen(ctx, '--format', 'text')),
  },
  {
    name: 'json+ovn',
    title: 'ovn-psample listen --format json --nb --sb (OVN decoder attached)',
    argv: (ctx) => listen(ctx, '--format', 'json', '--nb', ctx.northbound, '--sb', ctx.southbound),
  },
  {
    name: 'text+ovn',
    title: 'ovn-psample listen --format text --nb --sb (OVN decoder attached)',
    argv: (ctx) => listen(ctx, '--format', 'text', '--nb', ctx.northbound, '--sb', ctx.southbound),
  },
  {
    name: 'library',
    title: "ovn-psample as a library: on(batch), counting the samples, one line per batch (the hand-off's own cost)",
    argv: (ctx) => [
      process.execPath,
      ...ctx.nodeArgs,
      join(ctx.project, 'scripts', 'bench', 'lab', 'library-consumer.mjs'),
      ctx.project,
      String(ctx.group),
    ],
    samplesPerLine: /^batch (\d+)/,
  },
  {
    name: 'watch',
    title: 'ovn-psample watch --format json --nb --sb (OVN decoder, pods, one line per packet: its "samples" are counted)',
    argv: watch,
    // The packet's own count, after its chain (whose steps count theirs too).
    samplesPerLine: /,"samples":(\d+),"packet":/,
  },
  {
    name: 'watch-human',
    title: "ovn-psample watch --nb --sb, the human format (a line per packet, counted as the scenario's samples per packet)",
    argv: (ctx) => watch(ctx, 'human'),
    // The human line does not say how many samples it holds: each counts as many as one packet of the scenario makes.
    samplesPerLine: 'packet',
  },
  {
    name: 'agent',
    title: 'ovn-psample watch --aggregate 1 --metrics --nb --sb (the DaemonSet: nothing per packet, its interval lines count the samples)',
    argv: agent,
    samplesPerLine: /^\{"version":1,"type":"interval",.*?,"samples":(\d+),/,
    // The last interval is written at SIGTERM.
    countsAtExit: true,
  },
];

/**
 * A consumer by name. NAME@before is NAME run from the build given with --before (ctx.before): the
 * same measurement of two builds in one run, each against the C reader of its round.
 */
export function consumerNamed(name) {
  const [base, build, ...rest] = name.split('@');
  const consumer = CONSUMERS.find((c) => c.name === base);
  if (consumer === undefined || (build !== undefined && build !== 'before') || rest.length > 0) {
    throw new Error(`unknown consumer '${name}': pick from ${CONSUMERS.map((c) => c.name).join(', ')} (NAME@before: the --before build's)`);
  }
  if (build === undefined) return consumer;
  return {
    ...consumer,
    name,
    title: `${consumer.title}, the --before build`,
    argv: (ctx) => {
      if (ctx.before === undefined) throw new Error(`consumer '${name}' needs --before DIR (lab.sh bench --before=DIR)`);
      return consumer.argv({ ...ctx, project: ctx.before });
    },
  };
}

/**
 * The idle measurement: listen with and without the decoder, and watch, against a node process that only
 * keeps its event loop alive (it says "listening" once, to start like the others).
 */
export function idleParticipants(ctx) {
  return [
    { name: 'listen', argv: withoutOvnSockets(listen(ctx, '--format', 'json')) },
    { name: 'listen --nb --sb', argv: listen(ctx, '--format', 'json', '--nb', ctx.northbound, '--sb', ctx.southbound) },
    { name: 'watch --nb --sb', argv: watch(ctx) },
    { name: 'bare node', argv: [process.execPath, '-e', 'process.stderr.write("listening\\n"); setInterval(() => {}, 1e9)'] },
  ];
}
