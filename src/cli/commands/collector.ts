import { Command } from 'commander';
import type { Logger } from 'pino';
import { collectorSets, ownerText, type CollectorSetInfo } from '../../ovs/collector-set';
import { addCollector, removeCollector } from '../../ovs/collector';
import {
  addIpfixCollector,
  checkIpfixTarget,
  ipfixOfSet,
  IPFIX_COST_WARNING,
  removeIpfixCollector,
  type IpfixCollectorClaim,
} from '../../ovs/ipfix-collector';
import { InvalidOptionError } from '../../psample/errors';
import { CliUsageError } from '../errors';
import type { LocalOvs } from '../../ovs/local-ovs';
import { psampleSupport, type PsampleSupport } from '../../ovs/psample-support';
import { defineCommand } from '../command';
import { openLocalOvs, sslOptions, type SslFlags } from '../node-databases';
import {
  addCollectorSetOptions,
  addLocalGroupOption,
  addSslOptions,
  collectorFormatOption,
  collectorSetId,
  type CollectorSetFlags,
  type LogFlags,
} from '../options';
import { wholeNumber } from '../parse';

interface CollectorFlags extends CollectorSetFlags, SslFlags, LogFlags {
  group?: string;
  ipfix?: string;
  forceIpfix?: boolean;
  format: 'text' | 'json';
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

function ipfixJson(claim: IpfixCollectorClaim): Record<string, unknown> {
  return {
    target: claim.target,
    made: claim.made,
    forced: claim.forced,
    ipfixUuid: claim.ipfix.uuid,
    set: setJson(claim.set),
    psample: supportJson(claim.support),
  };
}

/** `collector add --ipfix`: the IPFIX branch, for nodes whose datapath has no psample. */
async function addIpfix(flags: CollectorFlags, log: Logger, target: string): Promise<void> {
  const id = collectorSetId(flags);
  try {
    checkIpfixTarget(target);
  } catch (error) {
    throw error instanceof InvalidOptionError ? new CliUsageError(`--ipfix: ${error.message}`) : error;
  }
  await withOvs(flags, async (ovs) => {
    const claim = await addIpfixCollector(ovs, { bridge: flags.bridge, id, target, force: flags.forceIpfix === true });
    log.warn(IPFIX_COST_WARNING);
    if (claim.forced)
      log.warn({ datapath: claim.support.datapathType }, `--force-ipfix: ${claim.support.reason} Every sample now also costs an upcall.`);
    const what =
      claim.made === 'set'
        ? `created Flow_Sample_Collector_Set ${id} on ${flags.bridge} exporting IPFIX to ${target} (external_ids:owner=ovn-psample)`
        : claim.made === 'ipfix'
          ? `attached an IPFIX row exporting to ${target} (external_ids:owner=ovn-psample) to Flow_Sample_Collector_Set ${id} on ${flags.bridge} (${ownerText(claim.set)})`
          : `Flow_Sample_Collector_Set ${id} on ${flags.bridge} already exports IPFIX to ${target}: reusing it unchanged`;
    log.info(`${what}${claim.made === 'nothing' ? '' : `; remove it with: ovn-psample collector remove --id ${id}`}`);
    print(flags.format === 'json' ? JSON.stringify({ ipfix: ipfixJson(claim) }) : target);
  });
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

async function withOvs<T>(flags: CollectorFlags, use: (ovs: LocalOvs) => T | Promise<T>): Promise<T> {
  const ovs = await openLocalOvs(flags.db, sslOptions(flags));
  try {
    return await use(ovs);
  } finally {
    await ovs.close();
  }
}

function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** A subcommand on the CLI's skeleton, with the options every collector subcommand takes. */
function subcommand(command: Command, withGroup: boolean, run: (flags: CollectorFlags, log: Logger) => Promise<void>): Command {
  addCollectorSetOptions(command, '');
  if (withGroup) addLocalGroupOption(command);
  addSslOptions(command);
  command.addOption(collectorFormatOption());
  return defineCommand(command, run);
}

export function collectorCommand(): Command {
  const collector = new Command('collector').description(
    "the OVS Flow_Sample_Collector_Set that makes OVN's samples reach psample: add, remove, list",
  );

  const add = collector
    .command('add')
    .description('make collector set --id on --bridge send its samples to a psample group, and print that group')
    .addHelpText(
      'after',
      `
Reuses a set that already has a local_group_id (made by ovn-kubernetes tooling, ovnkube-observ or
netobserv) without changing it; refuses a set without one; otherwise creates one marked
external_ids:owner=ovn-psample. Prints the group on stdout.

With --ipfix ADDR:PORT (a node whose datapath has no psample: Linux < 6.11, OVS < 3.4, the
userspace datapath), makes the set export IPFIX to that address instead, with an IPFIX row marked
external_ids:owner=ovn-psample (a set of its own if there is none, else the row attached to the
existing set); prints the target. On a datapath with psample it refuses unless --force-ipfix:
IPFIX makes every sample an upcall to ovs-vswitchd.

Examples:
  ovn-psample collector add                 # set 42 on br-int; prints e.g. 42
  ovn-psample watch --group "$(ovn-psample collector add)"
  ovn-psample collector add --ipfix 127.0.0.1:4739   # OVS < 3.4 or the userspace datapath`,
    )
    .option('--ipfix <addr:port>', 'export IPFIX to this collector address instead of psample (nodes without psample)')
    .option('--force-ipfix', 'with --ipfix: also on a datapath that has psample (every sample then costs an upcall)');
  subcommand(add, true, async (flags, log) => {
    if (flags.forceIpfix === true && flags.ipfix === undefined) throw new CliUsageError('--force-ipfix goes with --ipfix ADDR:PORT');
    if (flags.ipfix !== undefined) {
      if (flags.group !== undefined) throw new CliUsageError('--group is a psample group: give either --group or --ipfix');
      return addIpfix(flags, log, flags.ipfix);
    }
    const id = collectorSetId(flags);
    const group = flags.group === undefined ? undefined : wholeNumber('--group', flags.group, 0, 0xffffffff);
    await withOvs(flags, async (ovs) => {
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

  const remove = collector
    .command('remove')
    .description(
      "remove collector set --id from --bridge, if ovn-psample made it (never anyone else's), or the IPFIX row ovn-psample attached to it",
    );
  subcommand(remove, false, async (flags, log) => {
    const id = collectorSetId(flags);
    await withOvs(flags, async (ovs) => {
      const detached = await removeIpfixCollector(ovs, { bridge: flags.bridge, id });
      if (detached !== undefined && !(detached.ours && detached.localGroupId === undefined)) {
        log.info(
          `removed ovn-psample's IPFIX row from Flow_Sample_Collector_Set ${id} on ${flags.bridge} (${ownerText(detached)}), which stays`,
        );
        if (flags.format === 'json') print(JSON.stringify({ removed: null, ipfixDetachedFrom: setJson(detached) }));
        return;
      }
      const { removed } = detached === undefined ? await removeCollector(ovs, { bridge: flags.bridge, id }) : { removed: detached };
      if (removed === undefined) log.info(`no Flow_Sample_Collector_Set ${id} on ${flags.bridge}: nothing to remove`);
      else log.info(`removed Flow_Sample_Collector_Set ${id} on ${flags.bridge} (psample group ${removed.localGroupId ?? 'none'})`);
      if (flags.format === 'json') print(JSON.stringify({ removed: removed === undefined ? null : setJson(removed) }));
    });
  });

  const list = collector.command('list').description("list the collector sets and whether --bridge's datapath can emit psample samples");
  subcommand(list, false, async (flags) => {
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
        set.ipfix ? (ipfixOfSet(ovs, set)?.targets.join(',') ?? 'yes') : 'no',
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
