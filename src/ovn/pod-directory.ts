import type { CacheSelection, TableCache } from '../ovsdb/cache';
import type { OvsdbClient } from '../ovsdb/client';
import { ModelView, type ReadRow } from '../ovsdb/model';
import type { DatabaseSchema } from '../ovsdb/schema';
import { SharedMirror } from '../ovsdb/shared-mirror';
import { cidrContains, parseCidr, type Cidr } from '../packet/cidr';
import type { Endpoint } from './endpoint';
import { DEFAULT_NETWORK, externalId, NetworkKey } from './external-ids';
import type { Tables } from './northbound.generated';
import { portIps } from './port-addresses';
import { checkedSelection, NORTHBOUND_DATABASE } from './selection';

/** What pod identity reads of the northbound database: the ports ovn-kubernetes writes, and their switches. */
export const POD_DIRECTORY_READS = {
  Logical_Switch: { columns: ['ports', 'other_config', 'external_ids'] },
  Logical_Switch_Port: { columns: ['name', 'addresses', 'dynamic_addresses', 'external_ids'] },
} as const;

type Switch = ReadRow<Tables, typeof POD_DIRECTORY_READS, 'Logical_Switch'>;
/** external_ids ovn-kubernetes puts on pod ports (base_network_controller_pods.go). */
const POD_KEY = 'pod';
const NAMESPACE_KEY = 'namespace';
const NAD_KEY = 'k8s.ovn.org/nad';
/** A node's management port: "k8s-<node>" (types.K8sPrefix), network-prefixed on user-defined networks. */
const MANAGEMENT_PORT = /(?:^|_)k8s-(.+)$/;
/** Answers for addresses no port has, kept until the next change; bounded against address scans. */
const MAX_REMEMBERED_MISSES = 4096;

/**
 * The northbound tables and columns pod identity reads; throws OvnSchemaUnsupportedError when
 * `schema` lacks them or types them otherwise than the model.
 */
export function podSelection(schema: DatabaseSchema): CacheSelection {
  return checkedSelection(schema, POD_DIRECTORY_READS, 'point --nb at an OVN northbound database');
}

interface SwitchInfo {
  readonly network: string;
  readonly subnets: readonly Cidr[];
}

interface Indexed {
  readonly network: string;
  readonly endpoints: readonly Endpoint[];
}

function switchInfo(row: Switch): SwitchInfo {
  const config = row.other_config;
  const subnets: Cidr[] = [];
  // ovn-kubernetes writes the node subnet as other_config:subnet, IPv6 as ipv6_prefix (a /64).
  for (const part of String(config.get('subnet') ?? '').split(/[\s,]+/)) {
    const cidr = part === '' ? undefined : parseCidr(part);
    if (cidr !== undefined) subnets.push(cidr);
  }
  const v6 = config.get('ipv6_prefix');
  const cidr = v6 === undefined ? undefined : parseCidr(String(v6).includes('/') ? String(v6) : `${String(v6)}/64`);
  if (cidr !== undefined) subnets.push(cidr);
  return { network: externalId(row.external_ids, NetworkKey) ?? DEFAULT_NETWORK, subnets };
}

/**
 * Resolves packet addresses to pods and nodes from the northbound Logical_Switch_Ports
 * ovn-kubernetes writes (no Kubernetes API needed), kept live with the cache. Addresses are keyed
 * by network, so pods of user-defined networks with overlapping subnets never collide; resolve()
 * is a map lookup, and rebuilding follows only the ports each update touched.
 */
export class PodDirectory {
  private readonly nb: ModelView<Tables, typeof POD_DIRECTORY_READS>;
  private readonly stop: () => void;
  private readonly switches = new Map<string, SwitchInfo>();
  private readonly switchOfPort = new Map<string, string>();
  private readonly indexed = new Map<string, Indexed>();
  private readonly byNetwork = new Map<string, Map<string, Endpoint>>();
  private readonly misses = new Map<string, Map<string, Endpoint>>();
  private missCount = 0;
  private readonly dirty = new Set<string>();
  private release: (() => Promise<void>) | undefined;
  private changes = 0;

  /** Follows `nb`, a cache built with podSelection() (or a superset of it). */
  constructor(nb: TableCache) {
    this.nb = new ModelView(nb, POD_DIRECTORY_READS);
    for (const row of this.nb.table('Logical_Switch').values()) this.switchChanged(row._uuid, undefined, row);
    for (const row of this.nb.table('Logical_Switch_Port').values()) this.dirty.add(row._uuid);
    this.reindex();
    this.stop = this.nb.follow(
      (table, uuid, oldRow, newRow) => {
        if (table === 'Logical_Switch_Port') {
          this.dirty.add(uuid);
        } else {
          this.switchChanged(uuid, oldRow, newRow);
        }
      },
      () => this.reindex(),
    );
  }

  /**
   * Follows the northbound database `client` is connected to, and resolves after the initial sync.
   * The ports are read from the client's shared northbound mirror: the one an OvnSampleDecoder
   * on the same client reads (widened to the ports' columns if it lacks them), or a new one.
   */
  static async follow(client: OvsdbClient): Promise<PodDirectory> {
    const membership = SharedMirror.join(client, NORTHBOUND_DATABASE, POD_DIRECTORY_READS, podSelection);
    let directory: PodDirectory | undefined;
    try {
      directory = new PodDirectory(await membership.cache);
      directory.release = () => membership.leave();
      await membership.synced;
      return directory;
    } catch (error) {
      await (directory === undefined ? membership.leave() : directory.close());
      throw error;
    }
  }

  /** Bumped each time the index changes: an address resolved before may resolve otherwise now. */
  get generation(): number {
    return this.changes;
  }

  /** Pod and node addresses indexed. */
  get size(): number {
    let size = 0;
    for (const addresses of this.byNetwork.values()) size += addresses.size;
    return size;
  }

  /**
   * Who `ip` is on `network` ("default" or a user-defined network's name). Without a network
   * (no southbound database to name the sample's datapath) an address known on one network only
   * is still resolved.
   */
  resolve(network: string | undefined, ip: string): Endpoint {
    if (network !== undefined) {
      const found = this.byNetwork.get(network)?.get(ip);
      if (found !== undefined) return found;
    } else {
      let found: Endpoint | undefined;
      for (const addresses of this.byNetwork.values()) {
        const candidate = addresses.get(ip);
        if (candidate !== undefined) {
          if (found !== undefined) {
            found = undefined;
            break;
          }
          found = candidate;
        }
      }
      if (found !== undefined) return found;
    }
    const key = network ?? '';
    const remembered = this.misses.get(key)?.get(ip);
    if (remembered !== undefined) return remembered;
    const answer = this.unknown(network, ip);
    if (this.missCount < MAX_REMEMBERED_MISSES) {
      let addresses = this.misses.get(key);
      if (addresses === undefined) this.misses.set(key, (addresses = new Map<string, Endpoint>()));
      addresses.set(ip, answer);
      this.missCount++;
    }
    return answer;
  }

  /** Rows of the tables this directory reads, as "database/table" -> rows (for metrics). */
  mirrorSizes(): Map<string, number> {
    return new Map(
      (['Logical_Switch', 'Logical_Switch_Port'] as const).map((table) => [`${NORTHBOUND_DATABASE}/${table}`, this.nb.table(table).size]),
    );
  }

  async close(): Promise<void> {
    this.stop();
    const release = this.release;
    this.release = undefined;
    await release?.();
  }

  private unknown(network: string | undefined, ip: string): Endpoint {
    for (const info of this.switches.values()) {
      if ((network === undefined || info.network === network) && info.subnets.some((subnet) => cidrContains(subnet, ip))) {
        return Object.freeze({ kind: 'cluster', ip, network: info.network });
      }
    }
    return Object.freeze({ kind: 'external', ip });
  }

  private switchChanged(uuid: string, oldRow: Switch | undefined, newRow: Switch | undefined): void {
    const before = this.switches.get(uuid);
    const after = newRow === undefined ? undefined : switchInfo(newRow);
    if (after === undefined) this.switches.delete(uuid);
    else this.switches.set(uuid, after);
    const oldPorts = oldRow?.ports ?? [];
    const newPorts = newRow?.ports ?? [];
    const networkChanged = before?.network !== after?.network;
    for (const port of oldPorts) {
      if (!newPorts.includes(port) && this.switchOfPort.get(port) === uuid) this.switchOfPort.delete(port);
      if (networkChanged || !newPorts.includes(port)) this.dirty.add(port);
    }
    for (const port of newPorts) {
      if (this.switchOfPort.get(port) !== uuid) {
        this.switchOfPort.set(port, uuid);
        this.dirty.add(port);
      } else if (networkChanged) {
        this.dirty.add(port);
      }
    }
    this.forgetMisses();
  }

  private reindex(): void {
    if (this.dirty.size === 0) return;
    this.changes++;
    for (const uuid of this.dirty) {
      this.unindex(uuid);
      const entry = this.describe(uuid);
      if (entry === undefined) continue;
      this.indexed.set(uuid, entry);
      let addresses = this.byNetwork.get(entry.network);
      if (addresses === undefined) this.byNetwork.set(entry.network, (addresses = new Map<string, Endpoint>()));
      for (const endpoint of entry.endpoints) addresses.set(endpoint.ip, endpoint);
    }
    this.dirty.clear();
    this.forgetMisses();
  }

  private unindex(uuid: string): void {
    const entry = this.indexed.get(uuid);
    if (entry === undefined) return;
    this.indexed.delete(uuid);
    const addresses = this.byNetwork.get(entry.network);
    for (const endpoint of entry.endpoints) {
      // Another port may have taken the address over since (a pod replaced with the same IP).
      if (addresses?.get(endpoint.ip) === endpoint) addresses.delete(endpoint.ip);
    }
  }

  private describe(uuid: string): Indexed | undefined {
    const row = this.nb.table('Logical_Switch_Port').get(uuid);
    const switchUuid = this.switchOfPort.get(uuid);
    if (row === undefined || switchUuid === undefined) return undefined;
    const { name, external_ids: ids } = row;
    const network = externalId(ids, NetworkKey) ?? this.switches.get(switchUuid)?.network ?? DEFAULT_NETWORK;
    const ips = portIps(row.addresses, row.dynamic_addresses);
    let make: ((ip: string) => Endpoint) | undefined;
    if (externalId(ids, POD_KEY) === 'true') {
      const namespace = externalId(ids, NAMESPACE_KEY) ?? '';
      const nad = externalId(ids, NAD_KEY);
      // Port names are [<network prefix>_]<namespace>_<pod>; Kubernetes names never hold '_'.
      const pod = name.slice(name.lastIndexOf('_') + 1);
      make = (ip) => ({ kind: 'pod', ip, namespace, name: pod, network, ...(nad === undefined ? {} : { nad }), port: name });
    } else {
      const node = MANAGEMENT_PORT.exec(name)?.[1];
      if (node !== undefined) make = (ip) => ({ kind: 'node', ip, name: node, network, port: name });
    }
    if (make === undefined || ips.length === 0) return undefined;
    return { network, endpoints: ips.map((ip) => Object.freeze(make(ip))) };
  }

  private forgetMisses(): void {
    if (this.missCount > 0) {
      this.misses.clear();
      this.missCount = 0;
    }
  }
}
