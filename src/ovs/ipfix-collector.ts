import { isIP } from 'node:net';
import { OvsdbTransactionError } from '../errors';
import { mapColumn, stringColumn } from '../ovn/row-values';
import { InvalidOptionError } from '../psample/errors';
import {
  DEFAULT_BRIDGE,
  findCollectorSet,
  OVN_KUBERNETES_COLLECTOR_SET_ID,
  OWNER,
  OWNER_KEY,
  ownerText,
  type CollectorSetInfo,
} from './collector-set';
import type { CollectorOptions } from './collector';
import {
  holdBeacon,
  isOwnerKey,
  judgeOwner,
  ownerExternalIds,
  ownerFromExternalIds,
  sameOwner,
  type OwnerProcess,
  type OwnerVerdict,
} from './collector-owner';
import { OvsBridgeNotFoundError, OvsCollectorConflictError, OvsIpfixNotNeededError } from './errors';
import type { LocalOvs } from './local-ovs';
import { psampleSupport, type PsampleSupport } from './psample-support';

export interface AddIpfixCollectorOptions extends CollectorOptions {
  /** Where OVS sends IPFIX: "ADDRESS:PORT" (IPv6 as [ADDRESS]:PORT), the collector's listening address. */
  readonly target: string;
  /** Attach IPFIX even though the datapath emits psample samples (each sample then costs an upcall, and comes twice). */
  readonly force?: boolean;
  /** Marks the row as made by this process, to be removed by it (watch --add-ovs-collector). */
  readonly owner?: OwnerProcess;
}

/** The IPFIX row of a collector set, as read from the mirror. */
export interface IpfixRow {
  readonly uuid: string;
  readonly targets: readonly string[];
  readonly ours: boolean;
  /** The process that made it, when a watch did. */
  readonly ownerProcess?: OwnerProcess;
}

export interface IpfixCollectorClaim {
  readonly target: string;
  /** The set after the call. */
  readonly set: CollectorSetInfo;
  readonly ipfix: IpfixRow;
  /**
   * What this call made, and what releaseIpfixCollector() undoes: 'set' (the collector set and
   * its IPFIX row), 'ipfix' (an IPFIX row attached to an existing set), 'nothing' (the set
   * already sent IPFIX to the target).
   */
  readonly made: 'set' | 'ipfix' | 'nothing';
  readonly support: PsampleSupport;
  /** IPFIX on a datapath that emits psample samples: asked for with `force`. */
  readonly forced: boolean;
  /** A row a watch left, whose owner was judged (taken over when dead: why it was judged so). */
  readonly previousOwner?: OwnerVerdict;
}

/**
 * What IPFIX costs, said once to whoever attaches it: OVS cannot export IPFIX from the datapath,
 * so every sample becomes an upcall to ovs-vswitchd.
 */
export const IPFIX_COST_WARNING =
  'IPFIX makes every sampled packet an upcall to ovs-vswitchd (OVS exports IPFIX from userspace only): with OVN-Kubernetes sampling ACLs at probability 65535, ' +
  "that is every packet those ACLs see. Lower it by sampling less (the Sample rows' probability), or cap all upcalls to userspace with an OpenFlow meter: " +
  'ovs-ofctl -O OpenFlow13 add-meter br-int meter=slowpath,pktps,band=type=drop,rate=1000 (it caps every slow-path packet, not only samples)';

/**
 * How often OVS repeats a domain's templates on a row ovn-psample makes. OVS's own default, 600 s,
 * counts from the first record of the set's exporter, not from when a collector started to
 * listen: a watch started after `collector add --ipfix`, or one that took over a dead watch's
 * row, would decode nothing for up to ten minutes (the records without a template are counted as
 * lost). Each repeat is the domain's 89 templates (about 9 KB), sent only with a record of it.
 */
export const OWN_ROW_TEMPLATE_INTERVAL_S = 10;

/**
 * The columns of an IPFIX row ovn-psample makes: its target, its marks, and the template
 * interval where the schema has the column (OVS ≥ 3.2).
 */
function ownRow(ovs: LocalOvs, target: string, externalIds: unknown): Record<string, unknown> {
  const interval = ovs.cache.schema.tables.get('IPFIX')?.columns.has('template_interval') === true;
  return { targets: target, external_ids: externalIds, ...(interval ? { template_interval: OWN_ROW_TEMPLATE_INTERVAL_S } : {}) };
}

/** Checks an IPFIX target ("ADDRESS:PORT", IPv6 as [ADDRESS]:PORT); throws InvalidOptionError. */
export function checkIpfixTarget(target: string): void {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d+)$/.exec(target);
  const address = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  if (address === undefined || isIP(address) === 0 || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new InvalidOptionError(`IPFIX target "${target}": give ADDRESS:PORT with an IP address, e.g. 127.0.0.1:4739 or [::1]:4739`);
  }
}

function ipfixRow(ovs: LocalOvs, uuid: string): IpfixRow | undefined {
  const row = ovs.cache.table('IPFIX').get(uuid);
  if (row === undefined) return undefined;
  const externalIds = mapColumn(row, 'external_ids');
  const ownerProcess = ownerFromExternalIds(Object.fromEntries([...externalIds].map(([key, value]) => [String(key), String(value)])));
  const targets = row.targets;
  return {
    uuid,
    targets: Array.isArray(targets) ? targets.filter((target): target is string => typeof target === 'string') : [],
    ours: externalIds.get(OWNER_KEY) === OWNER,
    ...(ownerProcess === undefined ? {} : { ownerProcess }),
  };
}

/** The IPFIX row collector set `set` sends to, if any. */
export function ipfixOfSet(ovs: LocalOvs, set: CollectorSetInfo): IpfixRow | undefined {
  const row = ovs.cache.table('Flow_Sample_Collector_Set').get(set.uuid);
  const uuid = row === undefined ? undefined : stringColumn(row, 'ipfix');
  return uuid === undefined ? undefined : ipfixRow(ovs, uuid);
}

async function caughtUp<T>(read: () => T | undefined): Promise<T | undefined> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const value = read();
    if (value !== undefined || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Makes collector set `id` on `bridge` export IPFIX to `target`, for a node whose datapath has
 * no psample (Datapath.capabilities, OVS < 3.4, the userspace datapath), or when forced. Makes
 * only what is missing, marked external_ids:owner=ovn-psample: the set with its IPFIX row when
 * there is no set; an IPFIX row attached to a set without one; nothing when the set already
 * sends IPFIX to the target. Refuses to change an IPFIX row it did not make.
 */
export async function addIpfixCollector(ovs: LocalOvs, options: AddIpfixCollectorOptions): Promise<IpfixCollectorClaim> {
  checkIpfixTarget(options.target);
  const bridgeName = options.bridge ?? DEFAULT_BRIDGE;
  const id = options.id ?? OVN_KUBERNETES_COLLECTOR_SET_ID;
  const bridge = ovs.bridge(bridgeName);
  if (bridge === undefined) {
    throw new OvsBridgeNotFoundError(
      `The OVS database has no bridge ${bridgeName}: ovn-controller creates br-int, so start it first, or name the integration bridge with --bridge.`,
    );
  }
  const support = psampleSupport(ovs, bridgeName);
  if (support.supported !== false && options.force !== true) {
    throw new OvsIpfixNotNeededError(
      `${support.supported === true ? support.reason : `Whether ${bridgeName}'s datapath has psample is not known: ${support.reason}`} ` +
        'ovn-psample reads psample samples there, and an IPFIX exporter would make every sample an upcall and send it twice. ' +
        'Use psample (ovn-psample collector add, watch --add-ovs-collector), or force IPFIX (--force-ipfix) knowing that cost.',
    );
  }
  const forced = support.supported !== false;
  if (options.owner !== undefined) await holdBeacon(options.owner);
  const marks: [string, string][] = [[OWNER_KEY, OWNER], ...(options.owner === undefined ? [] : ownerExternalIds(options.owner))];
  const setWhere = [
    ['id', '==', id],
    ['bridge', '==', ['uuid', bridge._uuid]],
  ];
  const existing = findCollectorSet(ovs, bridge._uuid, id);
  let made: IpfixCollectorClaim['made'];
  if (existing === undefined) {
    made = 'set';
    await transactOrRaced(ovs, [
      { op: 'wait', table: 'Flow_Sample_Collector_Set', where: setWhere, columns: ['id'], until: '==', rows: [], timeout: 0 },
      { op: 'insert', table: 'IPFIX', 'uuid-name': 'ipfix', row: ownRow(ovs, options.target, ['map', marks]) },
      {
        op: 'insert',
        table: 'Flow_Sample_Collector_Set',
        row: { id, bridge: ['uuid', bridge._uuid], ipfix: ['named-uuid', 'ipfix'], external_ids: ['map', marks] },
      },
    ]);
  } else {
    const current = ipfixOfSet(ovs, existing);
    const leftBehind = current === undefined ? undefined : await takeOver(ovs, existing, current, options);
    if (leftBehind !== undefined) return { target: options.target, ...leftBehind, support, forced };
    if (current !== undefined) {
      if (!current.targets.includes(options.target)) {
        throw new OvsCollectorConflictError(
          `Flow_Sample_Collector_Set ${id} on ${bridgeName} (${ownerText(existing)}) already exports IPFIX to ${current.targets.join(', ') || 'nowhere'}${current.ours ? ' (an IPFIX row ovn-psample made)' : ''}, and ovn-psample never changes an IPFIX row it did not make: listen on that target instead, or ask its owner.`,
        );
      }
      return { target: options.target, set: existing, ipfix: current, made: 'nothing', support, forced };
    }
    made = 'ipfix';
    await transactOrRaced(ovs, [
      {
        op: 'wait',
        table: 'Flow_Sample_Collector_Set',
        where: [['_uuid', '==', ['uuid', existing.uuid]]],
        columns: ['ipfix'],
        until: '==',
        rows: [{ ipfix: ['set', []] }],
        timeout: 0,
      },
      { op: 'insert', table: 'IPFIX', 'uuid-name': 'ipfix', row: ownRow(ovs, options.target, ['map', marks]) },
      {
        op: 'update',
        table: 'Flow_Sample_Collector_Set',
        where: [['_uuid', '==', ['uuid', existing.uuid]]],
        row: { ipfix: ['named-uuid', 'ipfix'] },
      },
    ]);
  }
  const attached = await caughtUp(() => {
    const set = findCollectorSet(ovs, bridge._uuid, id);
    const ipfix = set === undefined ? undefined : ipfixOfSet(ovs, set);
    return set !== undefined && ipfix?.ours === true ? { set, ipfix } : undefined;
  });
  if (attached === undefined) {
    throw new OvsCollectorConflictError(
      `the IPFIX row for Flow_Sample_Collector_Set ${id} on ${bridgeName} was made but is gone again: check who manages collector sets on this node.`,
    );
  }
  return { target: options.target, ...attached, made, support, forced };
}

/**
 * Takes over the IPFIX row a watch made and left when it died (SIGKILL, OOM, a node reboot):
 * points it at `options.target` (with the short template interval: the set's exporter kept the
 * template clock that started for the dead watch) and marks it, and the set when that watch made
 * the set too, as this process's, so that this one removes it at exit. Undefined when the row is
 * not a watch's, when its owner lives, or when another process took it over first.
 */
async function takeOver(
  ovs: LocalOvs,
  set: CollectorSetInfo,
  row: IpfixRow,
  options: AddIpfixCollectorOptions,
): Promise<Pick<IpfixCollectorClaim, 'set' | 'ipfix' | 'made' | 'previousOwner'> | undefined> {
  const recorded = row.ours ? row.ownerProcess : undefined;
  const self = options.owner;
  if (recorded === undefined || self === undefined) return undefined;
  const previousOwner = sameOwner(recorded, self) ? undefined : await judgeOwner(recorded, self);
  if (previousOwner?.alive !== false) return undefined;
  await holdBeacon(self);
  const deadMarks = ['map', [[OWNER_KEY, OWNER], ...ownerExternalIds(recorded)]];
  const restamp = (externalIds: Readonly<Record<string, string>>): unknown => [
    'map',
    [...Object.entries(externalIds).filter(([key]) => !isOwnerKey(key)), ...ownerExternalIds(self)],
  ];
  // The set is the dead watch's own when it marked it too: it made the set for IPFIX alone.
  const madeSet = set.ours && set.ownerProcess !== undefined && sameOwner(set.ownerProcess, recorded);
  const rowIds = Object.fromEntries(
    [...mapColumn(ovs.cache.table('IPFIX').get(row.uuid)!, 'external_ids')].map(([k, v]) => [String(k), String(v)]),
  );
  const operations: unknown[] = [
    // Stamped only while the dead owner's marks are still there: of two processes taking it over at once, one wins.
    {
      op: 'update',
      table: 'IPFIX',
      where: [
        ['_uuid', '==', ['uuid', row.uuid]],
        ['external_ids', 'includes', deadMarks],
      ],
      row: ownRow(ovs, options.target, restamp(rowIds)),
    },
    ...(madeSet
      ? [
          {
            op: 'update',
            table: 'Flow_Sample_Collector_Set',
            where: [
              ['_uuid', '==', ['uuid', set.uuid]],
              ['external_ids', 'includes', deadMarks],
            ],
            row: { external_ids: restamp(set.externalIds) },
          },
        ]
      : []),
  ];
  const [result] = await ovs.transact(operations);
  if ((result as { count?: number }).count !== 1) return undefined;
  return {
    set: madeSet ? { ...set, ownerProcess: self } : set,
    ipfix: { ...row, targets: [options.target], ownerProcess: self },
    made: madeSet ? 'set' : 'ipfix',
    previousOwner,
  };
}

async function transactOrRaced(ovs: LocalOvs, operations: readonly unknown[]): Promise<void> {
  try {
    await ovs.transact(operations);
  } catch (error) {
    if (!(error instanceof OvsdbTransactionError)) throw error;
    throw new OvsCollectorConflictError(
      `another writer changed the collector set while ovn-psample attached IPFIX (${error.message}): run the command again, and check who manages collector sets on this node.`,
    );
  }
}

/** The operations that undo what a claim made, and only while its marks still say it is ours. */
function undo(claim: Pick<IpfixCollectorClaim, 'made' | 'set' | 'ipfix'>): unknown[] {
  if (claim.made === 'set') {
    // The IPFIX row is not a root row: it goes with the set that referenced it.
    return [
      {
        op: 'delete',
        table: 'Flow_Sample_Collector_Set',
        where: [
          ['_uuid', '==', ['uuid', claim.set.uuid]],
          ['external_ids', 'includes', ['map', [[OWNER_KEY, OWNER]]]],
        ],
      },
    ];
  }
  if (claim.made === 'ipfix') {
    return [
      {
        op: 'update',
        table: 'Flow_Sample_Collector_Set',
        where: [
          ['_uuid', '==', ['uuid', claim.set.uuid]],
          ['ipfix', '==', ['uuid', claim.ipfix.uuid]],
        ],
        row: { ipfix: ['set', []] },
      },
    ];
  }
  return [];
}

/** Undoes what addIpfixCollector() made; false when it was gone already (or changed by someone else). */
export async function releaseIpfixCollector(ovs: LocalOvs, claim: IpfixCollectorClaim): Promise<boolean> {
  const operations = undo(claim);
  if (operations.length === 0) return false;
  const [result] = await ovs.transact(operations);
  return (result as { count?: number }).count === 1;
}

/**
 * `collector remove` for IPFIX: undoes ovn-psample's IPFIX row on set `id` (the whole set when
 * ovn-psample made the set for IPFIX alone). Returns the set it changed, or undefined when the
 * set has no IPFIX row of ovn-psample's.
 */
export async function removeIpfixCollector(ovs: LocalOvs, options: CollectorOptions = {}): Promise<CollectorSetInfo | undefined> {
  const bridge = ovs.bridge(options.bridge ?? DEFAULT_BRIDGE);
  if (bridge === undefined) return undefined;
  const set = findCollectorSet(ovs, bridge._uuid, options.id ?? OVN_KUBERNETES_COLLECTOR_SET_ID);
  const ipfix = set === undefined ? undefined : ipfixOfSet(ovs, set);
  if (set === undefined || ipfix?.ours !== true) return undefined;
  const made = set.ours && set.localGroupId === undefined ? 'set' : 'ipfix';
  const [result] = await ovs.transact(undo({ made, set, ipfix }));
  return (result as { count?: number }).count === 1 ? set : undefined;
}
