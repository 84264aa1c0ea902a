import type { Logger } from 'pino';
import { addCollector, releaseCollector, type CollectorClaim } from '../ovs/collector';
import { findCollectorSet, ownerText, type CollectorSetInfo } from '../ovs/collector-set';
import { CollectorWatch } from '../ovs/collector-watch';
import { OvsCollectorNotFoundError } from '../ovs/errors';
import type { IpfixSource } from '../ipfix/source';
import { thisProcess } from '../ovs/collector-owner';
import { addIpfixCollector, IPFIX_COST_WARNING, ipfixOfSet, releaseIpfixCollector, type IpfixCollectorClaim } from '../ovs/ipfix-collector';
import type { LocalOvs } from '../ovs/local-ovs';
import type { SslOptions } from '../ovsdb/transport';
import { hasLocalOvs, openLocalOvs } from './node-databases';
import type { SampleSourceKind } from './options';
import { chooseSource } from './source-choice';

export interface CollectorSessionOptions {
  /** --source: psample, ipfix, or auto (decided here from the bridge's datapath). */
  readonly source: SampleSourceKind;
  /** --force-ipfix: attach IPFIX with --add-ovs-collector even where the datapath has psample. */
  readonly forceIpfix?: boolean;
  /** --db; given explicitly, the OVS database is required. */
  readonly db?: string;
  readonly bridge: string;
  readonly id: number;
  /** --group values; empty: find the group in the OVS database. */
  readonly groups: readonly number[];
  readonly addOvsCollector: boolean;
  /** Injected samples (--source): the OVS database is only used when named or needed. */
  readonly injected: boolean;
  readonly ssl?: SslOptions;
}

/** What the watch listens to and what it must undo at exit. */
export interface CollectorSession {
  /** The source the samples come from (--source auto decided). */
  readonly source: 'psample' | 'ipfix';
  /** The IPFIX source, bound before the collector set was pointed at it. */
  readonly ipfix: IpfixSource | undefined;
  /** psample groups to keep; empty: every group. */
  readonly groups: readonly number[];
  /** The node's OVS database, when reachable (also names interfaces). */
  readonly ovs: LocalOvs | undefined;
  /** Why samples may not reach the watch now (the OVS database gone, the set gone or sending elsewhere); undefined when in place. */
  problem(): string | undefined;
  /** Removes the collector set this watch made, stops following it, disconnects. */
  close(): Promise<void>;
}

function describe(set: CollectorSetInfo): string {
  return `Flow_Sample_Collector_Set ${set.id} on ${set.bridge} (${ownerText(set)})`;
}

/**
 * Finds or makes the collector set that sends OVN's samples to psample, follows it while the
 * watch runs (someone else's set can vanish under it: ovnkube-observ deletes set 42 when it
 * exits), and with --add-ovs-collector makes it again, then removes what it made at exit.
 */
export async function startCollectorSession(
  options: CollectorSessionOptions,
  log: Logger,
  bindIpfix: () => Promise<IpfixSource>,
): Promise<CollectorSession> {
  const groupsFromOvs = options.source !== 'ipfix' && !options.injected && options.groups.length === 0;
  const required = options.db !== undefined || options.addOvsCollector || groupsFromOvs;
  const useful = !options.injected && hasLocalOvs();
  const none = async (): Promise<CollectorSession> => {
    const source = options.source === 'ipfix' ? 'ipfix' : 'psample';
    if (options.source === 'auto') log.warn('--source auto: no OVS database to read the datapath from; reading psample');
    return {
      source,
      ipfix: source === 'ipfix' ? await bindIpfix() : undefined,
      groups: options.groups,
      ovs: undefined,
      problem: () => undefined,
      close: () => Promise.resolve(),
    };
  };
  if (!required && !useful) return none();
  let ovs: LocalOvs;
  try {
    ovs = await openLocalOvs(options.db, options.ssl);
  } catch (error) {
    if (required) throw error;
    // With --group given (or IPFIX), the OVS database only names interfaces: go on without it.
    log.warn({ err: (error as Error).message }, 'the OVS database is not readable: interfaces stay unnamed');
    return none();
  }
  if (chooseSource(options.source, ovs, options.bridge, log) === 'ipfix') return startIpfixSession(ovs, options, log, bindIpfix);
  let claim: CollectorClaim | undefined;
  let watch: CollectorWatch | undefined;
  let ovsConnected = true;
  ovs.client.on('status', (status) => {
    ovsConnected = status.state === 'connected' || status.state === 'synced';
  });
  const readding = new Set<Promise<void>>();
  try {
    let groups = options.groups;
    const bridge = ovs.bridge(options.bridge);
    if (options.addOvsCollector) {
      claim = await addCollector(ovs, {
        bridge: options.bridge,
        id: options.id,
        markOwner: true,
        ...(groups[0] === undefined ? {} : { group: groups[0] }),
      });
      if (claim.support.supported === undefined) log.warn({ datapath: claim.support.datapathType }, claim.support.reason);
      log.info(
        { group: claim.group, collectorSet: options.id, bridge: options.bridge },
        claim.owned
          ? claim.previousOwner === undefined
            ? `added ${describe(claim.set)} with psample group ${claim.group}; it is removed at exit`
            : `took over Flow_Sample_Collector_Set ${claim.set.id} on ${claim.set.bridge}, psample group ${claim.group}, from a watch that is gone (${claim.previousOwner.reason}); it is removed at exit`
          : `reusing ${describe(claim.set)}, psample group ${claim.group}${claim.previousOwner === undefined ? '' : ` (${claim.previousOwner.reason})`}`,
      );
      if (claim.groupDiffers) log.warn(`--group ${groups[0]} ignored: the existing set sends to group ${claim.group}`);
      groups = [claim.group];
    } else if (groups.length === 0) {
      const set = bridge === undefined ? undefined : findCollectorSet(ovs, bridge._uuid, options.id);
      if (set?.localGroupId === undefined) {
        throw new OvsCollectorNotFoundError(
          `${set === undefined ? `No Flow_Sample_Collector_Set ${options.id} on ${options.bridge}` : `${describe(set)} has no local_group_id`}, so OVN's samples reach no psample group: run with --add-ovs-collector (the set is removed at exit), or make one with 'ovn-psample collector add', or pass --group N.`,
        );
      }
      log.info({ group: set.localGroupId }, `listening to psample group ${set.localGroupId} of ${describe(set)}`);
      groups = [set.localGroupId];
    }
    if (bridge !== undefined && (claim !== undefined || options.groups.length === 0)) {
      watch = followSet(
        ovs,
        bridge._uuid,
        options,
        groups[0]!,
        log,
        (attempt) => {
          readding.add(attempt);
          void attempt.finally(() => readding.delete(attempt));
        },
        (next) => {
          claim = next;
        },
      );
    }
    const group = groups[0];
    return {
      source: 'psample',
      ipfix: undefined,
      groups,
      ovs,
      problem() {
        if (!ovsConnected) return `the OVS database (${ovs.client.remote}) is disconnected; reconnecting`;
        if (watch === undefined) return undefined;
        const set = watch.set;
        if (set === undefined) {
          return `Flow_Sample_Collector_Set ${options.id} on ${options.bridge} is gone, so OVN's samples reach no psample group${options.addOvsCollector ? ' (making it again)' : ''}`;
        }
        return set.localGroupId === group
          ? undefined
          : `${describe(set)} sends to psample group ${set.localGroupId ?? 'none'}, not ${group}`;
      },
      async close() {
        watch?.close();
        try {
          // A set being made again as the watch stops is removed with the rest.
          await Promise.all(readding);
          if (claim !== undefined && (await releaseCollector(ovs, claim))) log.info(`removed ${describe(claim.set)}`);
        } finally {
          await ovs.close();
        }
      },
    };
  } catch (error) {
    watch?.close();
    await ovs.close();
    throw error;
  }
}

/** ADDRESS:PORT for OVS to send to: the bound address, loopback when bound to every address. */
function ipfixTarget(source: IpfixSource): string {
  const v6 = source.address.includes(':');
  const address = source.address === '0.0.0.0' ? '127.0.0.1' : source.address === '::' ? '::1' : source.address;
  return v6 ? `[${address}]:${source.port}` : `${address}:${source.port}`;
}

/**
 * The IPFIX side: the socket is bound first (a port in use fails before OVS is changed), then
 * with --add-ovs-collector the collector set is pointed at it (an IPFIX row of this process's,
 * or one a killed watch left, taken over) and what was made is undone at exit.
 */
async function startIpfixSession(
  ovs: LocalOvs,
  options: CollectorSessionOptions,
  log: Logger,
  bindIpfix: () => Promise<IpfixSource>,
): Promise<CollectorSession> {
  let ovsConnected = true;
  ovs.client.on('status', (status) => {
    ovsConnected = status.state === 'connected' || status.state === 'synced';
  });
  let ipfix: IpfixSource | undefined;
  let claim: IpfixCollectorClaim | undefined;
  try {
    ipfix = await bindIpfix();
    if (options.addOvsCollector) {
      claim = await addIpfixCollector(ovs, {
        bridge: options.bridge,
        id: options.id,
        target: ipfixTarget(ipfix),
        owner: thisProcess(),
        ...(options.forceIpfix === true ? { force: true } : {}),
      });
      // Said by whoever makes the export; an export someone else made already costs what it costs.
      if (claim.made !== 'nothing') log.warn({ collectorSet: options.id, bridge: options.bridge }, IPFIX_COST_WARNING);
      if (claim.forced)
        log.warn({ datapath: claim.support.datapathType }, `--force-ipfix: ${claim.support.reason} Every sample now also costs an upcall.`);
      const what = `Flow_Sample_Collector_Set ${options.id} on ${options.bridge}`;
      log.info(
        { collectorSet: options.id, bridge: options.bridge, target: claim.target },
        claim.previousOwner !== undefined
          ? `took over the IPFIX export of ${what} to ${claim.target} from a watch that is gone (${claim.previousOwner.reason}); it is removed at exit`
          : claim.made === 'set'
            ? `added ${what} exporting IPFIX to ${claim.target}; it is removed at exit`
            : claim.made === 'ipfix'
              ? `attached IPFIX to ${claim.target} to ${describe(claim.set)}; it is detached at exit`
              : `reusing the IPFIX export of ${describe(claim.set)} to ${claim.target}`,
      );
    }
  } catch (error) {
    ipfix?.close();
    await ovs.close();
    throw error;
  }
  const source = ipfix;
  const bridgeUuid = ovs.bridge(options.bridge)?._uuid;
  const target = claim?.target;
  const readding = new Set<Promise<void>>();
  // Someone deleting the set (ovnkube-observ at its exit deletes set 42) stops the export: it is attached again.
  const watch = claim === undefined || bridgeUuid === undefined ? undefined : new CollectorWatch(ovs, bridgeUuid, options.id);
  watch?.on('vanished', (set) => {
    log.warn({ collectorSet: set.id }, `${describe(set)} was deleted: OVS no longer exports IPFIX to ${target}; attaching it again`);
    const attempt = addIpfixCollector(ovs, {
      bridge: options.bridge,
      id: options.id,
      target: target!,
      owner: thisProcess(),
      ...(options.forceIpfix === true ? { force: true } : {}),
    })
      .then((next) => {
        claim = next;
        log.info(
          { target: next.target },
          `${next.made === 'nothing' ? 'reusing' : 'attached again'}: ${describe(next.set)} exports IPFIX to ${next.target}`,
        );
      })
      .catch((error: Error) => log.error({ err: error.message }, `could not attach IPFIX again: ${error.message}`));
    readding.add(attempt);
    void attempt.finally(() => readding.delete(attempt));
  });
  return {
    source: 'ipfix',
    ipfix: source,
    groups: [],
    ovs,
    problem() {
      if (!ovsConnected) return `the OVS database (${ovs.client.remote}) is disconnected; reconnecting`;
      if (watch === undefined) return undefined;
      const set = watch.set;
      if (set === undefined)
        return `Flow_Sample_Collector_Set ${options.id} on ${options.bridge} is gone, so OVS exports no IPFIX to ${target} (attaching it again)`;
      const targets = ipfixOfSet(ovs, set)?.targets ?? [];
      return targets.includes(target!)
        ? undefined
        : `${describe(set)} exports IPFIX to ${targets.join(', ') || 'nowhere'}, not ${target}: no more samples reach this watch; restart it`;
    },
    async close() {
      watch?.close();
      try {
        // An export being attached again as the watch stops is removed with the rest.
        await Promise.all(readding);
        if (claim !== undefined && claim.made !== 'nothing' && (await releaseIpfixCollector(ovs, claim))) {
          log.info(
            claim.made === 'set'
              ? `removed ${describe(claim.set)}`
              : `detached the IPFIX export to ${claim.target} from Flow_Sample_Collector_Set ${claim.set.id} on ${claim.set.bridge}`,
          );
        }
      } finally {
        await ovs.close();
      }
    },
  };
}

function followSet(
  ovs: LocalOvs,
  bridgeUuid: string,
  options: CollectorSessionOptions,
  group: number,
  log: Logger,
  readding: (attempt: Promise<void>) => void,
  reclaimed: (claim: CollectorClaim) => void,
): CollectorWatch {
  const watch = new CollectorWatch(ovs, bridgeUuid, options.id);
  const differs = (set: CollectorSetInfo): void => {
    if (set.localGroupId !== group) {
      log.warn(
        { group: set.localGroupId },
        `${describe(set)} now sends to psample group ${set.localGroupId ?? 'none'}, not ${group}: no more samples reach this watch; restart it`,
      );
    }
  };
  watch.on('vanished', (set) => {
    log.warn({ collectorSet: set.id, group }, `${describe(set)} was deleted: OVN's samples no longer reach psample group ${group}`);
    if (!options.addOvsCollector) return;
    readding(
      addCollector(ovs, { bridge: options.bridge, id: options.id, group, markOwner: true })
        .then((claim) => {
          reclaimed(claim);
          log.info(
            { group: claim.group },
            claim.owned ? `added ${describe(claim.set)} again with psample group ${claim.group}` : `reusing ${describe(claim.set)}`,
          );
          differs(claim.set);
        })
        .catch((error: Error) => log.error({ err: error.message }, `could not add the collector set again: ${error.message}`)),
    );
  });
  watch.on('appeared', (set) => {
    log.info(`${describe(set)} is back`);
    differs(set);
  });
  watch.on('changed', (set) => differs(set));
  return watch;
}
