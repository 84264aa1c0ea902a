import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { Command, Option } from 'commander';
import type { LevelWithSilent } from 'pino';
import { DEFAULT_GROUP_WINDOW_MS } from '../events/event-assembler';
import { DEFAULT_MAX_FLOWS } from '../events/flow-aggregator';
import { compileFilter, type NetworkEventFilter } from '../events/filter';
import type { FlowSubject } from '../events/network-event';
import { OvsdbRemoteError } from '../errors';
import { IpfixOptionError } from '../ipfix/errors';
import { ExporterAllowList } from '../ipfix/exporter-allow-list';
import { DEFAULT_IPFIX_ADDRESS, DEFAULT_IPFIX_PORT, type OpenIpfixOptions } from '../ipfix/options';
import { parseRemotes } from '../ovsdb/remote';
import { InvalidOptionError } from '../psample/errors';
import { netnsPath } from '../psample/options';
import type { LineFormat } from '../output/sample-lines';
import { DEFAULT_BRIDGE, DEFAULT_LOCAL_GROUP, OVN_KUBERNETES_COLLECTOR_SET_ID } from '../ovs/collector-set';
import { DEFAULT_OVS_REMOTE } from '../ovs/local-ovs';
import type { DropPrivilegesOptions, OpenPsampleOptions, PsampleSourceOptions } from '../psample/types';
import { CliUsageError } from './errors';
import type { PipelineOptions } from './event-pipeline';
import { DEFAULT_NB_REMOTE, DEFAULT_SB_REMOTE, sslOptions, type SslFlags } from './node-databases';
import { collect, wholeNumber } from './parse';

// Every option of every command, its default and how its value is read: commands pick theirs
// from here. Every value is checked before anything is opened, so a usage error (exit 2)
// leaves nothing behind.

/**
 * The CLI writes each batch out rather than reacting to each sample, and a stream of lines that
 * comes a fifth of a second at a time still reads as live: so `listen` takes samples from the
 * reader thread every 200 ms while they flow, which saves most of the fixed cost of a hand-off (a
 * wake-up of both threads, a call into JavaScript, a write) that the library's adaptive 1–10 ms
 * interval pays for its latency. Measured in the lab at 10,000 samples/s (qemu/TCG, where a
 * thread that wakes up pays for cold caches): 200 ms costs 9 % less CPU per sample than 50 ms.
 * `watch` and `top` take them every 40 ms: the samples of one packet are grouped when they reach
 * the grouping within the group window (50 ms) of the first, which a hand-off as long as the
 * window would split. A packet's samples come microseconds apart, so one hand-off takes them all
 * but when its end falls between them; the next one, 40 ms later, still finds the packet waiting.
 * Measured in the lab (OVN, watch --format json): 40 ms costs 15-20 % less CPU per sample than
 * 20 ms at 10,000 samples/s, 15-35 % less at 30,000/s.
 */
export const LISTEN_DELIVERY_INTERVAL_MS = 200;
export const GROUPING_DELIVERY_INTERVAL_MS = 40;
/** watch's and top's interval when --group-window leaves no room for the default (40 ms or less). */
export const SHORT_GROUPING_DELIVERY_INTERVAL_MS = 20;

/**
 * How many samples the CLI holds between the reader thread and its output while the output falls
 * behind: a burst faster than the output is held, not dropped, up to this many samples or the
 * reader's 512 MiB, whichever comes first. Twice the library's default: in the lab, 5 s at 82,000
 * OVN samples/s overflowed 262,144 by 7,416 samples (1.8 %) while `listen --nb --sb` wrote about
 * 37,000 lines/s. Held samples take about 400 bytes each (peak RSS 191 MB with 262,144 held).
 */
export const CLI_QUEUE_CAPACITY = 524_288;

/** `top`'s sliding window. */
export const DEFAULT_TOP_WINDOW_SECONDS = 10;

// --- logging: every command -------------------------------------------------------------------

export type LogFormat = 'json' | 'text';
const LOG_LEVELS: readonly LevelWithSilent[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

export interface LogFlags {
  logLevel: string;
  logFormat?: LogFormat;
}

export function parseLogLevel(value: string): LevelWithSilent {
  if (!(LOG_LEVELS as readonly string[]).includes(value)) {
    throw new CliUsageError(`--log-level ${value}: use one of ${LOG_LEVELS.join(', ')}`);
  }
  return value as LevelWithSilent;
}

function parseLogFormat(value: string): LogFormat {
  if (value !== 'json' && value !== 'text') throw new CliUsageError(`--log-format ${value}: use json or text`);
  return value;
}

export function addLogOptions(command: Command): Command {
  return command
    .option('--log-level <level>', LOG_LEVELS.join(', '), 'info')
    .addOption(new Option('--log-format <format>', 'json or text (default: text on a terminal, else json)').argParser(parseLogFormat));
}

// --- output ------------------------------------------------------------------------------------

export function parseLineFormat(value: string): LineFormat {
  if (value !== 'json' && value !== 'text') throw new CliUsageError(`--format ${value}: use json or text`);
  return value;
}

export const lineFormatOption = (): Option => new Option('--format <format>', 'json or text').default('json').argParser(parseLineFormat);

export interface StopFlags {
  count?: string;
  duration?: string;
}

export function addStopOptions(command: Command, counted: string): Command {
  return command.option('--count <n>', `stop after ${counted}`).option('--duration <seconds>', 'stop after this many seconds');
}

export interface StopLimits {
  /** --count; Infinity without it. */
  readonly limit: number;
  /** --duration; undefined without it. */
  readonly seconds: number | undefined;
}

export function stopLimits(flags: StopFlags): StopLimits {
  return {
    limit: flags.count === undefined ? Infinity : wholeNumber('--count', flags.count, 1),
    seconds: flags.duration === undefined ? undefined : wholeNumber('--duration', flags.duration, 1),
  };
}

// --- the psample socket: listen, watch, top -------------------------------------------------

export interface SocketFlags {
  netns?: string;
  allNsid?: boolean;
  rcvbuf?: string;
  deliveryInterval: string;
  queueCapacity: string;
  source?: string;
  ipfixListen?: string;
  ipfixExporter?: string[];
  dropPrivileges?: string | boolean;
}

/**
 * Where samples come from: the kernel's psample family, an OVS IPFIX exporter, or `auto` (psample
 * where the bridge's datapath has it, IPFIX otherwise: src/ovs/psample-support.ts).
 */
export type SampleSourceKind = 'psample' | 'ipfix' | 'auto';
export const SAMPLE_SOURCES: readonly SampleSourceKind[] = ['psample', 'ipfix', 'auto'];

export interface SourceChoice {
  readonly kind: SampleSourceKind;
  /** `usersock:…`/`generic:…`: psample samples injected (tests, replays) instead of the kernel's. */
  readonly injected?: PsampleSourceOptions;
}

/** `psample`, `ipfix`, `auto`, or `usersock:FAMILY:GROUP` / `generic:FAMILY:GROUP`: injected psample samples. */
export function parseSource(value: string): SourceChoice {
  if ((SAMPLE_SOURCES as readonly string[]).includes(value)) return { kind: value as SampleSourceKind };
  const [protocol, family, group, ...extra] = value.split(':');
  if ((protocol !== 'usersock' && protocol !== 'generic') || family === undefined || group === undefined || extra.length > 0) {
    throw new CliUsageError(
      `--source ${value}: use usersock:FAMILY_ID:GROUP_ID or generic:FAMILY_ID:GROUP_ID for injected samples, or one of ${SAMPLE_SOURCES.join(', ')}`,
    );
  }
  return {
    kind: 'psample',
    injected: { protocol, familyId: wholeNumber('--source family', family, 0), groupId: wholeNumber('--source group', group, 1) },
  };
}

/** `--ipfix-listen ADDR:PORT` (IPv6 as [ADDR]:PORT); port 0 lets the kernel pick one. */
export function parseIpfixListen(value: string): { readonly address: string; readonly port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d+)$/.exec(value);
  const address = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  if (address === undefined || isIP(address) === 0 || !Number.isInteger(port) || port > 65535) {
    throw new CliUsageError(
      `--ipfix-listen ${value}: give ADDRESS:PORT with an IP address of this host, e.g. ${DEFAULT_IPFIX_ADDRESS}:${DEFAULT_IPFIX_PORT} or [::1]:${DEFAULT_IPFIX_PORT}`,
    );
  }
  return { address, port };
}

/** The IPFIX source's options from the flags: bound to loopback unless --ipfix-listen says otherwise. */
export function ipfixOptions(flags: SocketFlags): OpenIpfixOptions {
  const listen = parseIpfixListen(flags.ipfixListen ?? `${DEFAULT_IPFIX_ADDRESS}:${DEFAULT_IPFIX_PORT}`);
  const exporters = flags.ipfixExporter;
  if (exporters !== undefined) {
    try {
      new ExporterAllowList(exporters);
    } catch (error) {
      throw error instanceof IpfixOptionError ? new CliUsageError(`--ipfix-exporter: ${error.message}`) : error;
    }
  }
  return {
    ...listen,
    ...(exporters === undefined ? {} : { exporters }),
    ...(flags.rcvbuf === undefined ? {} : { receiveBufferBytes: wholeNumber('--rcvbuf', flags.rcvbuf, 4096) }),
    queueCapacity: wholeNumber('--queue-capacity', flags.queueCapacity, 1, 2 ** 31 - 1),
  };
}

/** The source the flags choose, with the flags that only one source reads checked against it. */
export function sourceChoice(flags: SocketFlags): SourceChoice {
  const choice = flags.source === undefined ? { kind: 'psample' as const } : parseSource(flags.source);
  if (choice.kind === 'psample' && (flags.ipfixListen !== undefined || flags.ipfixExporter !== undefined)) {
    throw new CliUsageError('--ipfix-listen and --ipfix-exporter configure the IPFIX source: add --source ipfix (or --source auto)');
  }
  if (choice.kind === 'ipfix') {
    const psampleOnly = [
      ['--netns', flags.netns],
      ['--all-nsid', flags.allNsid],
    ].filter(([, value]) => value !== undefined && value !== false);
    if (psampleOnly.length > 0) {
      throw new CliUsageError(
        `${psampleOnly.map(([flag]) => flag).join(', ')}: only the psample source reads ${psampleOnly.length === 1 ? 'it' : 'them'}; --source ipfix listens on a UDP socket (--ipfix-listen)`,
      );
    }
  }
  return choice;
}

export function deliveryIntervalMs(value: string): number {
  return wholeNumber('--delivery-interval', value, 1, 1000);
}

/** `--drop-privileges[=USER[:GROUP]]`: commander gives true without a value. */
export function dropPrivilegesFlag(value: string | boolean | undefined): true | DropPrivilegesOptions | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return true;
  const [user, group, ...extra] = value.split(':');
  if (user === undefined || user === '' || group === '' || extra.length > 0) {
    throw new CliUsageError(`--drop-privileges=${value}: give USER or USER:GROUP (names or numeric ids), or no value to keep the user`);
  }
  return group === undefined ? { user } : { user, group };
}

/** The socket options of listen, watch and top; `defaultDeliveryMs` is the command's hand-off interval. */
export function addSocketOptions(command: Command, defaultDeliveryMs: number, sourceHelp: string): Command {
  return command
    .option('--netns <ns>', 'read samples of this network namespace: name under /run/netns, path, or pid')
    .option('--all-nsid', 'also read samples from peer namespaces that have an nsid')
    .option('--rcvbuf <bytes>', 'socket receive buffer (default 32 MiB)')
    .addOption(
      new Option('--delivery-interval <ms>', 'while samples flow, take them from the reader thread this often (1-1000 ms)').default(
        String(defaultDeliveryMs),
      ),
    )
    .addOption(
      new Option('--queue-capacity <samples>', 'samples held while the output falls behind, before any is dropped').default(
        String(CLI_QUEUE_CAPACITY),
      ),
    )
    .addOption(new Option('--source <source>', sourceHelp))
    .option(
      '--ipfix-listen <addr:port>',
      `with --source ipfix|auto: the UDP address to receive OVS's IPFIX on (default ${DEFAULT_IPFIX_ADDRESS}:${DEFAULT_IPFIX_PORT}); another than loopback also needs --ipfix-exporter`,
    )
    .option(
      '--ipfix-exporter <addr>',
      'with --source ipfix|auto: an exporter address or CIDR block whose datagrams are decoded (repeatable; default loopback only, others are counted and dropped)',
      collect,
    )
    .addOption(
      new Option(
        '--drop-privileges [user]',
        'once the socket has joined, give up every capability in every thread and set no_new_privs; with USER[:GROUP], also switch to that user (and its groups)',
      ),
    );
}

/** --netns: a namespace that is not there is wrong usage, found before anything is changed. */
function existingNetns(value: string): string {
  const path = netnsPath(value)!;
  if (!existsSync(path)) {
    throw new CliUsageError(
      `--netns ${value}: no network namespace at ${path}: give a name listed by 'ip netns list', a path, or the pid of a process in it`,
    );
  }
  return value;
}

/** A remote in ovn-nbctl syntax, or a usage error naming the flag. */
export function remoteFlag(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    parseRemotes(value);
  } catch (error) {
    throw error instanceof OvsdbRemoteError ? new CliUsageError(`${flag} ${value}: ${error.message}`) : error;
  }
  return value;
}

/** What the socket flags say, but the groups and the delivery interval, which each command decides. */
export function socketOptions(flags: SocketFlags): Omit<OpenPsampleOptions, 'groups' | 'signal' | 'deliveryIntervalMs'> {
  const dropPrivileges = dropPrivilegesFlag(flags.dropPrivileges);
  return {
    ...(flags.netns === undefined ? {} : { netns: existingNetns(flags.netns) }),
    ...(flags.allNsid === true ? { listenAllNsid: true } : {}),
    ...(flags.rcvbuf === undefined ? {} : { receiveBufferBytes: wholeNumber('--rcvbuf', flags.rcvbuf, 1) }),
    queueCapacity: wholeNumber('--queue-capacity', flags.queueCapacity, 1, 2 ** 31 - 1),
    ...(flags.source === undefined || parseSource(flags.source).injected === undefined
      ? {}
      : { source: parseSource(flags.source).injected! }),
    ...(dropPrivileges === undefined ? {} : { dropPrivileges }),
  };
}

// --- the node's databases ----------------------------------------------------------------------

export interface OvnFlags {
  nb?: string;
  sb?: string;
  /** False with --no-enrich. */
  enrich: boolean;
}

export function addOvnOptions(command: Command, purpose: { nb: string; sb: string }): Command {
  return command
    .option('--nb <remote>', `OVN northbound database${purpose.nb} (default ${DEFAULT_NB_REMOTE} or the node's, when present)`)
    .option('--sb <remote>', `OVN southbound database${purpose.sb} (default ${DEFAULT_SB_REMOTE} or the node's, when present)`);
}

export const addEnrichOption = (command: Command, help: string): Command => command.option('--no-enrich', help);

export function addSslOptions(command: Command): Command {
  return command
    .option('--private-key <file>', 'PEM private key for ssl: remotes (as ovn-nbctl -p)')
    .option('--certificate <file>', 'PEM certificate for ssl: remotes (as ovn-nbctl -c)')
    .option('--ca-cert <file>', "PEM CA certificate that must have signed the server's (as ovn-nbctl -C)");
}

export interface CollectorSetFlags {
  db?: string;
  bridge: string;
  id: string;
}

export function addCollectorSetOptions(command: Command, dbHelp: string): Command {
  return command
    .option('--db <remote>', `the node's OVS database${dbHelp} (default ${DEFAULT_OVS_REMOTE} when present)`)
    .option('--bridge <name>', 'the integration bridge of the collector set', DEFAULT_BRIDGE)
    .option(
      '--id <id>',
      "Flow_Sample_Collector_Set id (OVN-Kubernetes' Sample_Collector uses 42)",
      String(OVN_KUBERNETES_COLLECTOR_SET_ID),
    );
}

export const collectorSetId = (flags: CollectorSetFlags): number => wholeNumber('--id', flags.id, 0, 0xffffffff);

export const addLocalGroupOption = (command: Command): Command =>
  command.option('--group <n>', `psample group of a set this creates (an existing set keeps its own; default ${DEFAULT_LOCAL_GROUP})`);

export const collectorFormatOption = (): Option =>
  new Option('--format <format>', 'text or json').choices(['text', 'json']).default('text');

// --- watch and top: the event pipeline and its filters ------------------------------------------

export interface FilterFlags {
  src?: string[];
  dst?: string[];
  port?: string[];
  proto?: string[];
  namespace?: string[];
  policy?: string[];
  action?: string[];
  app?: string[];
}

export const SOURCE_HELP =
  "psample (the kernel's psample samples; default), ipfix (OVS's per-flow IPFIX, on --ipfix-listen: for datapaths without psample) or auto (psample where the bridge's datapath has it, else ipfix)";

export interface PipelineFlags extends SocketFlags, OvnFlags, CollectorSetFlags, FilterFlags, SslFlags, LogFlags {
  addOvsCollector?: boolean;
  forceIpfix?: boolean;
  groupWindow: string;
}

/** --group and --no-group share commander's attribute name: each is collected by its own listener. */
export interface GroupFlags {
  groups: string[];
  ungrouped: boolean;
}

export function addPipelineOptions(command: Command): GroupFlags {
  const flags: GroupFlags = { groups: [], ungrouped: false };
  command.addOption(
    new Option('--group <n>', 'psample group to read (repeatable); default: the group of collector set --id in the OVS database').argParser(
      (value: string) => {
        flags.groups.push(value);
        return flags.groups;
      },
    ),
  );
  addSocketOptions(command, GROUPING_DELIVERY_INTERVAL_MS, SOURCE_HELP);
  addCollectorSetOptions(command, ', for the collector set and interface names');
  command.option(
    '--add-ovs-collector',
    'make the collector set if there is none (reusing one that has a psample group), remove it at exit; with the IPFIX source, attach an IPFIX target to it (only where the datapath has no psample, or with --source ipfix) and remove that at exit',
  );
  command.option(
    '--force-ipfix',
    'with --source ipfix --add-ovs-collector: attach IPFIX even where the datapath has psample (every sample then costs an upcall)',
  );
  addOvnOptions(command, { nb: '', sb: ', for datapath names, drop samples and networks' });
  addEnrichOption(command, 'do not decode cookies through OVN (no policies, no pods)');
  command
    .addOption(new Option('--no-group', 'one event per sample: do not group the samples of one packet into its verdict chain'))
    .option(
      '--group-window <ms>',
      'samples of one packet (same bytes, same datapath) closer than this are grouped',
      String(DEFAULT_GROUP_WINDOW_MS),
    )
    .option('--src <addr>', 'source address, CIDR or pod namespace/name (repeatable)', collect)
    .option('--dst <addr>', 'destination address, CIDR or pod namespace/name (repeatable)', collect)
    .option('--port <n>', 'TCP/UDP/SCTP source or destination port (repeatable)', collect)
    .option('--proto <p>', 'tcp, udp, sctp, icmp, icmpv6, arp or a protocol number (repeatable)', collect)
    .option('--namespace <ns>', 'namespace of a pod or of a policy of the packet (repeatable)', collect)
    .option('--policy <name>', 'policy a step names: name, namespace/name or label such as anp:NAME (repeatable)', collect)
    .option('--action <verdict>', 'allow, drop, pass or reject, in any step (repeatable)', collect)
    .option('--app <app>', 'acl-new, acl-est or drop: the sampling application of any step (repeatable)', collect);
  addSslOptions(command);
  command.on('option:no-group', () => {
    flags.ungrouped = true;
  });
  return flags;
}

export function pipelineOptions(flags: PipelineFlags, groups: GroupFlags): PipelineOptions {
  const ssl = sslOptions(flags);
  const choice = sourceChoice(flags);
  if (choice.kind === 'ipfix' && groups.groups.length > 0) {
    throw new CliUsageError('--group names psample groups: --source ipfix reads the collector set --id from IPFIX instead');
  }
  const socket = socketOptions(flags);
  const ipfix = choice.kind === 'psample' ? undefined : ipfixOptions(flags);
  if (flags.forceIpfix === true && (choice.kind !== 'ipfix' || flags.addOvsCollector !== true)) {
    throw new CliUsageError('--force-ipfix goes with --source ipfix --add-ovs-collector');
  }
  // The set is removed at exit over the connection opened before the drop; should ovsdb-server
  // restart meanwhile, only root (owner of its socket) could connect again to remove it.
  if (typeof socket.dropPrivileges === 'object' && flags.addOvsCollector === true) {
    throw new CliUsageError(
      "--add-ovs-collector with --drop-privileges=USER: removing the collector set at exit needs write access to the OVS database's socket, which USER lacks: " +
        "use --drop-privileges without a user (root without capabilities still owns the socket), or make the set beforehand ('ovn-psample collector add') and watch with --drop-privileges=USER",
    );
  }
  const nb = remoteFlag('--nb', flags.nb);
  const sb = remoteFlag('--sb', flags.sb);
  const groupWindowMs = groups.ungrouped ? 0 : wholeNumber('--group-window', flags.groupWindow, 1, 60_000);
  const interval = deliveryIntervalMs(flags.deliveryInterval);
  if (groupWindowMs > 0 && interval >= groupWindowMs) {
    throw new CliUsageError(
      `--delivery-interval ${interval} must be shorter than --group-window ${groupWindowMs}: the samples of one packet would reach the grouping in different hand-offs ` +
        'and be shown as separate packets (or use --no-group)',
    );
  }
  return {
    socket: { ...socket, deliveryIntervalMs: interval },
    ...(ipfix === undefined ? {} : { ipfix }),
    collector: {
      source: choice.kind,
      ...(flags.forceIpfix === true ? { forceIpfix: true } : {}),
      ...(flags.db === undefined ? {} : { db: remoteFlag('--db', flags.db)! }),
      bridge: flags.bridge,
      id: collectorSetId(flags),
      groups: groups.groups.map((group) => wholeNumber('--group', group, 0, 0xffffffff)),
      addOvsCollector: flags.addOvsCollector === true,
      injected: choice.injected !== undefined,
      ...(ssl === undefined ? {} : { ssl }),
    },
    ovn: flags.enrich
      ? {
          ...(nb === undefined ? {} : { nb }),
          ...(sb === undefined ? {} : { sb }),
          ...(ssl === undefined ? {} : { ssl }),
        }
      : undefined,
    groupWindowMs,
  };
}

function eventFilter(flags: FilterFlags): NetworkEventFilter {
  return {
    ...(flags.src === undefined ? {} : { src: flags.src }),
    ...(flags.dst === undefined ? {} : { dst: flags.dst }),
    ...(flags.port === undefined ? {} : { port: flags.port.map((port) => wholeNumber('--port', port, 0, 65535)) }),
    ...(flags.proto === undefined ? {} : { proto: flags.proto }),
    ...(flags.namespace === undefined ? {} : { namespace: flags.namespace }),
    ...(flags.policy === undefined ? {} : { policy: flags.policy }),
    ...(flags.action === undefined ? {} : { action: flags.action as NetworkEventFilter['action'] }),
    ...(flags.app === undefined ? {} : { app: flags.app as NetworkEventFilter['app'] }),
  };
}

/** The filter flags as a predicate; a wrong value is a usage error. */
export function eventPredicate(flags: FilterFlags): (event: FlowSubject) => boolean {
  try {
    return compileFilter(eventFilter(flags));
  } catch (error) {
    throw error instanceof InvalidOptionError ? new CliUsageError(error.message) : error;
  }
}

// --- watch --aggregate ----------------------------------------------------------------------------

export interface AggregateFlags {
  aggregate?: string;
  aggregateMaxFlows?: string;
}

export function addAggregateOptions(command: Command): Command {
  return command
    .option(
      '--aggregate <seconds>',
      'instead of a line per packet, one JSON record per flow (endpoints, protocol and port, verdict chain) and interval of SECONDS, then one per interval with its totals',
    )
    .option(
      '--aggregate-max-flows <n>',
      `--aggregate: flows an interval holds; the packets of more flows are counted as overflow (default ${DEFAULT_MAX_FLOWS})`,
    );
}

/**
 * watch's and top's --delivery-interval: as given, else the default where --group-window leaves
 * room for it, else the shorter one (which the window check then judges as any other).
 */
export function groupingDeliveryInterval(flags: { deliveryInterval: string; groupWindow: string }, given: boolean): string {
  if (given) return flags.deliveryInterval;
  const window = Number(flags.groupWindow);
  return Number.isInteger(window) && window <= GROUPING_DELIVERY_INTERVAL_MS
    ? String(SHORT_GROUPING_DELIVERY_INTERVAL_MS)
    : flags.deliveryInterval;
}

export interface AggregateOptions {
  readonly seconds: number;
  readonly maxFlows: number;
}

/**
 * --aggregate and its cap, or undefined without it. `lineFormat`: the --format the user gave, if
 * any; records are JSON, so only json goes with them.
 */
export function aggregateOptions(
  flags: AggregateFlags & { output?: string; pcapng?: string; logCookie?: boolean; printFullPacket?: boolean },
  lineFormat: string | undefined,
): AggregateOptions | undefined {
  if (flags.aggregate === undefined) {
    if (flags.aggregateMaxFlows !== undefined)
      throw new CliUsageError('--aggregate-max-flows caps the flows of --aggregate: add --aggregate SECONDS');
    return undefined;
  }
  const seconds = wholeNumber('--aggregate', flags.aggregate, 1, 86_400);
  const maxFlows =
    flags.aggregateMaxFlows === undefined
      ? DEFAULT_MAX_FLOWS
      : wholeNumber('--aggregate-max-flows', flags.aggregateMaxFlows, 1, 10_000_000);
  if (lineFormat !== undefined && lineFormat !== 'json') {
    throw new CliUsageError(`--aggregate writes JSON flow records, not --format ${lineFormat}: leave --format out (or give --format json)`);
  }
  if (flags.logCookie === true || flags.printFullPacket === true) {
    throw new CliUsageError(
      '--log-cookie and --print-full-packet shape the observ format, which --aggregate does not write: leave them out',
    );
  }
  if (flags.pcapng === '-' && flags.output === undefined) {
    throw new CliUsageError(
      '--pcapng - takes stdout, where --aggregate writes its records: give --output FILE for the records, or --pcapng FILE',
    );
  }
  return { seconds, maxFlows };
}
