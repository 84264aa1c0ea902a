import { Command, Option } from 'commander';
import type { Logger } from 'pino';
import {
  collectorSets,
  DEFAULT_BRIDGE,
  DEFAULT_LOCAL_GROUP,
  ownerText,
  OVN_KUBERNETES_COLLECTOR_SET_ID,
  type CollectorSetInfo,
} from '../ovs/collector-set';
import { addCollector, removeCollector } from '../ovs/collector';
import { DEFAULT_OVS_REMOTE, type LocalOvs } from '../ovs/local-ovs';
import { psampleSupport, type PsampleSupport } from '../ovs/psample-support';
import { createLogger, parseLogFormat, parseLogLevel, type LogFormat } from './log';
import { openLocalOvs } from './ovs-connect';
import { wholeNumber } from './parse';
import { addSslOptions, sslOptions, type SslFlags } from './ssl-options';
import { setCommandLogger } from './run-state';

interface CollectorFlags extends SslFlags {
  db?: string;
  bridge: string;
  id: string;
  group?: string;
  format: 'text' | 'json';
  logLevel?: string;
  logFormat?: LogFormat;
}

function supportJson(support: PsampleSupport): Record<string, unknown> {
  return {
    supported: support.supported ?? null,
    datapathType: support.datapathType,
    ovsVersion: support.ovsVersion ?? null,
    reason: support.reason,
  };
}

function setJson(set: CollectorSetInfo): Record<string, unknown> {
  return {
    uuid: set.uuid,
    id: set.id,
    bridge: set.bridge,
    localGroupId: set.localGroupId ?? null,
    ipfix: set.ipfix,
    owner: set.owner ?? null,
    ours: set.ours,
    externalIds: set.externalIds,
  };
}

function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

async function withOvs<T>(flags: CollectorFlags, use: (ovs: LocalOvs, log: Logger) => T | Promise<T>): Promise<T> {
  const log = createLogger({
    level: flags.logLevel === undefined ? 'info' : parseLogLevel(flags.logLevel),
    ...(flags.logFormat === undefined ? {} : { format: flags.logFormat }),
  });
  setCommandLogger(log);
  const ovs = await openLocalOvs(flags.db, sslOptions(flags));
  try {
    return await use(ovs, log);
  } finally {
    await ovs.close();
  }
}

function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

function common(command: Command, withGroup: boolean): Command {
  command
    .option('--db <remote>', `the node's OVS database`, DEFAULT_OVS_REMOTE)
    .option('--bridge <name>', 'the integration bridge', DEFAULT_BRIDGE)
    .option(
      '--id <id>',
      "Flow_Sample_Collector_Set id (OVN-Kubernetes' Sample_Collector uses 42)",
      String(OVN_KUBERNETES_COLLECTOR_SET_ID),
    );
  if (withGroup)
    command.option('--group <n>', `psample group of a set this creates (an existing set keeps its own; default ${DEFAULT_LOCAL_GROUP})`);
  addSslOptions(command);
  return command
    .addOption(new Option('--format <format>', 'text or json').choices(['text', 'json']).default('text'))
    .option('--log-level <level>', 'trace, debug, info, warn, error, fatal or silent', 'info')
    .addOption(new Option('--log-format <format>', 'json or text (default: text on a terminal, else json)').argParser(parseLogFormat));
}

export function collectorCommand(): Command {
  const collector = new Command('collector').description(
    "the OVS Flow_Sample_Collector_Set that makes OVN's samples reach psample: add, remove, list",
  );

  common(collector.command('add'), true)
    .description('make collector set --id on --bridge send its samples to a psample group, and print that group')
    .addHelpText(
      'after',
      `
Reuses a set that already has a local_group_id (made by ovn-kubernetes tooling, ovnkube-observ or
netobserv) without changing it; refuses a set without one; otherwise creates one marked
external_ids:owner=ovn-psample. Prints the group on stdout.

Examples:
  ovn-psample collector add                 # set 42 on br-int; prints e.g. 42
  ovn-psample watch --group "$(ovn-psample collector add)"`,
    )
    .action(async (flags: CollectorFlags) => {
      const id = wholeNumber('--id', flags.id, 0, 0xffffffff);
      const group = flags.group === undefined ? undefined : wholeNumber('--group', flags.group, 0, 0xffffffff);
      await withOvs(flags, async (ovs, log) => {
        const claim = await addCollector(ovs, { bridge: flags.bridge, id, ...(group === undefined ? {} : { group }) });
        if (claim.support.supported === undefined) log.warn({ datapath: claim.support.datapathType }, claim.support.reason);
        if (claim.owned) {
          log.info(
            `created Flow_Sample_Collector_Set ${id} on ${flags.bridge} with psample group ${claim.group} (external_ids:owner=ovn-psample); remove it with: ovn-psample collector remove --id ${id}`,
          );
        } else {
          log.info(
            `Flow_Sample_Collector_Set ${id} on ${flags.bridge} already sends samples to psample group ${claim.group} (${ownerText(claim.set)}): reusing it unchanged`,
          );
        }
        if (claim.groupDiffers) log.warn(`--group ${group} ignored: the existing set uses group ${claim.group}`);
        print(
          flags.format === 'json'
            ? JSON.stringify({ group: claim.group, created: claim.owned, set: setJson(claim.set), psample: supportJson(claim.support) })
            : String(claim.group),
        );
      });
    });

  common(collector.command('remove'), false)
    .description("remove collector set --id from --bridge, if ovn-psample made it (never anyone else's)")
    .action(async (flags: CollectorFlags) => {
      const id = wholeNumber('--id', flags.id, 0, 0xffffffff);
      await withOvs(flags, async (ovs, log) => {
        const { removed } = await removeCollector(ovs, { bridge: flags.bridge, id });
        if (removed === undefined) log.info(`no Flow_Sample_Collector_Set ${id} on ${flags.bridge}: nothing to remove`);
        else log.info(`removed Flow_Sample_Collector_Set ${id} on ${flags.bridge} (psample group ${removed.localGroupId ?? 'none'})`);
        if (flags.format === 'json') print(JSON.stringify({ removed: removed === undefined ? null : setJson(removed) }));
      });
    });

  common(collector.command('list'), false)
    .description("list the collector sets and whether --bridge's datapath can emit psample samples")
    .action(async (flags: CollectorFlags) => {
      await withOvs(flags, (ovs) => {
        const sets = collectorSets(ovs);
        const support = psampleSupport(ovs, flags.bridge);
        if (flags.format === 'json') {
          print(JSON.stringify({ sets: sets.map(setJson), psample: { bridge: flags.bridge, ...supportJson(support) } }));
          return;
        }
        const rows = sets.map((set) => [
          set.bridge,
          String(set.id),
          set.localGroupId === undefined ? '-' : String(set.localGroupId),
          set.ipfix ? 'yes' : 'no',
          set.ours ? `${set.owner} (ours)` : (set.owner ?? '-'),
        ]);
        print(table([['BRIDGE', 'ID', 'PSAMPLE-GROUP', 'IPFIX', 'OWNER'], ...rows]));
        const verdict = support.supported === true ? 'yes' : support.supported === false ? 'no' : 'unknown';
        print(
          `psample on ${flags.bridge} (${support.datapathType} datapath${support.ovsVersion === undefined ? '' : `, OVS ${support.ovsVersion}`}): ${verdict}. ${support.reason}`,
        );
      });
    });

  return collector;
}
