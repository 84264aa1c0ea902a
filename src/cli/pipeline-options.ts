import { Command, Option } from 'commander';
import { DEFAULT_GROUP_WINDOW_MS } from '../events/event-assembler';
import type { NetworkEventFilter } from '../events/filter';
import { DEFAULT_BRIDGE, OVN_KUBERNETES_COLLECTOR_SET_ID } from '../ovs/collector-set';
import { DEFAULT_OVS_REMOTE } from '../ovs/local-ovs';
import { DEFAULT_NB_REMOTE, DEFAULT_SB_REMOTE } from './decode-ovn';
import { GROUPING_DELIVERY_INTERVAL_MS, deliveryIntervalOption, groupingDeliveryIntervalMs } from './delivery-interval';
import { dropPrivilegesFlag, dropPrivilegesOption } from './drop-privileges';
import { queueCapacity, queueCapacityOption } from './queue-capacity';
import { CliUsageError } from './errors';
import { parseSource } from './listen';
import { parseLogFormat, type LogFormat } from './log';
import { collect, wholeNumber } from './parse';
import type { PipelineOptions } from './event-pipeline';
import { addSslOptions, sslOptions, type SslFlags } from './ssl-options';

/** What commander collects for the options watch and top share. */
export interface PipelineFlags extends SslFlags {
  netns?: string;
  allNsid?: boolean;
  rcvbuf?: string;
  deliveryInterval: string;
  queueCapacity: string;
  source?: string;
  dropPrivileges?: string | boolean;
  db?: string;
  bridge: string;
  id: string;
  addOvsCollector?: boolean;
  nb?: string;
  sb?: string;
  enrich: boolean;
  groupWindow: string;
  src?: string[];
  dst?: string[];
  port?: string[];
  proto?: string[];
  namespace?: string[];
  policy?: string[];
  action?: string[];
  app?: string[];
  logLevel: string;
  logFormat?: LogFormat;
}

/** --group and --no-group share commander's attribute name: each is collected by its own listener. */
export interface GroupFlags {
  groups: string[];
  ungrouped: boolean;
}

export function addPipelineOptions(command: Command): GroupFlags {
  const flags: GroupFlags = { groups: [], ungrouped: false };
  command
    .addOption(
      new Option(
        '--group <n>',
        'psample group to read (repeatable); default: the group of collector set --id in the OVS database',
      ).argParser((value: string) => {
        flags.groups.push(value);
        return flags.groups;
      }),
    )
    .option('--netns <ns>', 'read samples of this network namespace: name under /run/netns, path, or pid')
    .option('--all-nsid', 'also read samples from peer namespaces that have an nsid')
    .option('--rcvbuf <bytes>', 'socket receive buffer (default 32 MiB)')
    .addOption(deliveryIntervalOption(GROUPING_DELIVERY_INTERVAL_MS))
    .addOption(queueCapacityOption())
    .addOption(new Option('--source <spec>', 'injected samples instead of the kernel: usersock:FAMILY_ID:GROUP_ID').hideHelp())
    .addOption(dropPrivilegesOption())
    .option(
      '--db <remote>',
      `the node's OVS database, for the collector set and interface names (default ${DEFAULT_OVS_REMOTE} when present)`,
    )
    .option('--bridge <name>', 'integration bridge of the collector set', DEFAULT_BRIDGE)
    .option('--id <id>', 'Flow_Sample_Collector_Set id', String(OVN_KUBERNETES_COLLECTOR_SET_ID))
    .option('--add-ovs-collector', 'make the collector set if there is none (reusing one that has a psample group), remove it at exit')
    .option('--nb <remote>', `OVN northbound database (default ${DEFAULT_NB_REMOTE} when present)`)
    .option(
      '--sb <remote>',
      `OVN southbound database, for datapath names, drop samples and networks (default ${DEFAULT_SB_REMOTE} when present)`,
    )
    .option('--no-enrich', 'do not decode cookies through OVN (no policies, no pods)')
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
  command
    .option('--log-level <level>', 'trace, debug, info, warn, error, fatal or silent', 'info')
    .addOption(new Option('--log-format <format>', 'json or text (default: text on a terminal, else json)').argParser(parseLogFormat));
  command.on('option:no-group', () => {
    flags.ungrouped = true;
  });
  return flags;
}

export function pipelineOptions(flags: PipelineFlags, groups: GroupFlags): PipelineOptions {
  const ssl = sslOptions(flags);
  const dropPrivileges = dropPrivilegesFlag(flags.dropPrivileges);
  // The set is removed at exit over the connection opened before the drop; should ovsdb-server
  // restart meanwhile, only root (owner of its socket) could connect again to remove it.
  if (typeof dropPrivileges === 'object' && flags.addOvsCollector === true) {
    throw new CliUsageError(
      "--add-ovs-collector with --drop-privileges=USER: removing the collector set at exit needs write access to the OVS database's socket, which USER lacks: " +
        "use --drop-privileges without a user (root without capabilities still owns the socket), or make the set beforehand ('ovn-psample collector add') and watch with --drop-privileges=USER",
    );
  }
  const groupWindowMs = groups.ungrouped ? 0 : wholeNumber('--group-window', flags.groupWindow, 1, 60_000);
  return {
    socket: {
      ...(flags.netns === undefined ? {} : { netns: flags.netns }),
      ...(flags.allNsid === true ? { listenAllNsid: true } : {}),
      ...(flags.rcvbuf === undefined ? {} : { receiveBufferBytes: wholeNumber('--rcvbuf', flags.rcvbuf, 1) }),
      deliveryIntervalMs: groupingDeliveryIntervalMs(flags.deliveryInterval, groupWindowMs),
      queueCapacity: queueCapacity(flags.queueCapacity),
      ...(flags.source === undefined ? {} : { source: parseSource(flags.source) }),
      ...(dropPrivileges === undefined ? {} : { dropPrivileges }),
    },
    collector: {
      ...(flags.db === undefined ? {} : { db: flags.db }),
      bridge: flags.bridge,
      id: wholeNumber('--id', flags.id, 0, 0xffffffff),
      groups: groups.groups.map((group) => wholeNumber('--group', group, 0, 0xffffffff)),
      addOvsCollector: flags.addOvsCollector === true,
      injected: flags.source !== undefined,
      ...(ssl === undefined ? {} : { ssl }),
    },
    ovn: flags.enrich
      ? {
          ...(flags.nb === undefined ? {} : { nb: flags.nb }),
          ...(flags.sb === undefined ? {} : { sb: flags.sb }),
          ...(ssl === undefined ? {} : { ssl }),
        }
      : undefined,
    groupWindowMs,
  };
}

export function eventFilter(flags: PipelineFlags): NetworkEventFilter {
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
