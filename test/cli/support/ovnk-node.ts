/**
 * The OVN databases of one OVN-Kubernetes node, as the lab's support/ovnk-node.sh builds it but on
 * the host's ovsdb-server with OVN 25.03's schemas: pods as Logical_Switch_Ports (name
 * <namespace>_<pod>, external_ids namespace/pod=true), the node's management port, a
 * user-defined network whose pod reuses a default-network address, and the policies whose
 * samples the watch tests inject.
 */
import { afterAll, beforeAll } from 'vitest';
import { formatCookieHex } from '../../../src/ovn/cookie';
import { encodePsample } from '../../../src/index';
import { createInjector, type PsampleInjector } from '../../../src/psample/injector';
import { startOvnDatabases, type OvnDatabases } from '../../ovn/support/ovn-databases';
import { injectedSourceArgs } from '../../support/cli';
import {
  adminNetworkPolicyAcl,
  adminNetworkPolicyPortGroupName,
  datapathBindingOp,
  dbObjectIds,
  DEFAULT_NETWORK_CONTROLLER,
  egressFirewallAcl,
  namespacePortGroupName,
  netpolNamespaceAcl,
  netpolNamespacePortGroupName,
  networkPolicyAcl,
  networkPolicyPortGroupIds,
  networkPolicyPortGroupName,
  NorthboundTransaction,
  OVNK_SAMPLING_APP_IDS,
  sampleMetadataOf,
  udnSwitchName,
  type OvnkAcl,
} from '../../ovn/support/ovnk-fixtures';

export const NODE = 'node-a';
export const DEFAULT_KEY = 1;
export const UDN_KEY = 2;
export const UDN = 'tenant-blue';

export interface Pod {
  readonly namespace: string;
  readonly name: string;
  readonly ip: string;
  readonly mac: string;
}

export const PODS = {
  frontend: { namespace: 'shop', name: 'frontend', ip: '10.244.0.3', mac: '0a:58:0a:f4:00:03' },
  backend: { namespace: 'shop', name: 'backend', ip: '10.244.0.4', mac: '0a:58:0a:f4:00:04' },
  db: { namespace: 'shop', name: 'db', ip: '10.244.0.5', mac: '0a:58:0a:f4:00:05' },
  client: { namespace: 'tenant-b', name: 'client', ip: '10.244.0.6', mac: '0a:58:0a:f4:00:06' },
} as const satisfies Record<string, Pod>;
/** On the user-defined network, with the same address as shop/frontend on the default one. */
export const UDN_POD: Pod = { namespace: 'blue', name: 'web', ip: '10.244.0.3', mac: '0a:58:0a:f4:01:03' };
export const MANAGEMENT_IP = '10.244.0.2';
export const OUTSIDE_IP = '172.18.0.10';

export const ACLS = {
  allowFrontend: networkPolicyAcl({
    namespace: 'shop',
    policy: 'allow-frontend',
    direction: 'Ingress',
    peerMatch: 'ip4.src == 10.244.0.3',
  }),
  isolation: netpolNamespaceAcl({ namespace: 'shop', direction: 'Ingress', type: 'defaultDeny' }),
  anpPass: adminNetworkPolicyAcl({
    name: 'pass-monitoring',
    direction: 'Ingress',
    gressIndex: 0,
    priority: 29000,
    peerMatch: 'ip4.src == 10.244.0.6',
    action: 'pass',
  }),
  egressFirewall: egressFirewallAcl({ namespace: 'shop', ruleIndex: 0, destination: '172.18.0.0/16', action: 'drop' }),
} satisfies Record<string, OvnkAcl>;

export type AclName = keyof typeof ACLS;

/** The 8-byte cookie OVS puts on a sample of `acl` taken by `app` on the datapath with `key`. */
export function cookieOf(acl: AclName, app: 'acl-new' | 'acl-est' = 'acl-new', key = DEFAULT_KEY): Uint8Array {
  const obsDomainId = ((OVNK_SAMPLING_APP_IDS[app] << 24) | key) >>> 0;
  return Uint8Array.from(Buffer.from(formatCookieHex({ obsDomainId, obsPointId: sampleMetadataOf(ACLS[acl]) }), 'hex'));
}

const map = (record: Record<string, string>): unknown => ['map', Object.entries(record)];

function podPort(nb: NorthboundTransaction, pod: Pod, extra: Record<string, string> = {}, prefix = ''): string {
  const uuidName = `lsp_${prefix}${pod.namespace}_${pod.name}`.replace(/[^a-zA-Z0-9_]/g, '_');
  nb.operations.push({
    op: 'insert',
    table: 'Logical_Switch_Port',
    'uuid-name': uuidName,
    row: {
      name: `${prefix}${pod.namespace}_${pod.name}`,
      addresses: `${pod.mac} ${pod.ip}`,
      external_ids: map({ namespace: pod.namespace, pod: 'true', ...extra }),
    },
  });
  return uuidName;
}

export interface OvnkNodeDatabases extends OvnDatabases {
  /** Adds a pod port to the node switch, as ovn-kubernetes does when a pod starts. */
  addPod(pod: Pod): Promise<void>;
  removePod(pod: Pod): Promise<void>;
}

export async function startOvnkNodeDatabases(options: { ssl?: boolean } = {}): Promise<OvnkNodeDatabases> {
  const dbs = await startOvnDatabases(options);
  const nb = new NorthboundTransaction();
  nb.samplingApps();
  const collector = nb.collector();
  const named = Object.fromEntries(Object.entries(ACLS).map(([key, acl]) => [key, nb.acl(acl, { collector })])) as Record<AclName, string>;
  nb.portGroup({
    name: networkPolicyPortGroupName('shop', 'allow-frontend'),
    externalIds: networkPolicyPortGroupIds('shop', 'allow-frontend'),
    acls: [named.allowFrontend],
  });
  nb.portGroup({
    name: netpolNamespacePortGroupName('shop', 'Ingress'),
    externalIds: dbObjectIds(DEFAULT_NETWORK_CONTROLLER, 'NetpolNamespace', [
      ['k8s.ovn.org/name', 'shop'],
      ['direction', 'Ingress'],
    ]),
    acls: [named.isolation],
  });
  nb.portGroup({
    name: adminNetworkPolicyPortGroupName('pass-monitoring', false),
    externalIds: dbObjectIds(DEFAULT_NETWORK_CONTROLLER, 'AdminNetworkPolicy', [['k8s.ovn.org/name', 'pass-monitoring']]),
    acls: [named.anpPass],
  });
  nb.portGroup({
    name: namespacePortGroupName('shop'),
    externalIds: dbObjectIds(DEFAULT_NETWORK_CONTROLLER, 'Namespace', [['k8s.ovn.org/name', 'shop']]),
    acls: [named.egressFirewall],
  });
  const ports = Object.values(PODS).map((pod) => podPort(nb, pod));
  nb.operations.push({
    op: 'insert',
    table: 'Logical_Switch_Port',
    'uuid-name': 'lsp_mgmt',
    row: { name: `k8s-${NODE}`, addresses: `0a:58:0a:f4:00:02 ${MANAGEMENT_IP}` },
  });
  nb.operations.push({
    op: 'insert',
    table: 'Logical_Switch',
    'uuid-name': 'ls_node',
    row: {
      name: NODE,
      ports: ['set', [...ports, 'lsp_mgmt'].map((p) => ['named-uuid', p])],
      other_config: map({ subnet: '10.244.0.0/24', exclude_ips: MANAGEMENT_IP }),
    },
  });
  const udnPrefix = `${UDN.replaceAll('-', '.')}_`;
  const udnPort = podPort(
    nb,
    UDN_POD,
    { 'k8s.ovn.org/nad': `${UDN_POD.namespace}/${UDN}`, 'k8s.ovn.org/network': UDN, 'k8s.ovn.org/topology': 'layer3' },
    udnPrefix,
  );
  nb.operations.push({
    op: 'insert',
    table: 'Logical_Switch',
    'uuid-name': 'ls_udn',
    row: {
      name: udnSwitchName(UDN, NODE),
      ports: ['set', [['named-uuid', udnPort]]],
      other_config: map({ subnet: '10.244.0.0/24' }),
      external_ids: map({ 'k8s.ovn.org/network': UDN, 'k8s.ovn.org/role': 'primary', 'k8s.ovn.org/topology': 'layer3' }),
    },
  });
  const results = await dbs.nbWriter.transact('OVN_Northbound', nb.operations);
  const uuidOf = (name: string): string => {
    const index = nb.operations.findIndex((operation) => operation['uuid-name'] === name);
    return (results[index] as { uuid: [string, string] }).uuid[1];
  };
  await dbs.sbWriter.transact('OVN_Southbound', [
    datapathBindingOp({ tunnelKey: DEFAULT_KEY, logicalSwitchUuid: uuidOf('ls_node'), name: NODE }),
    datapathBindingOp({ tunnelKey: UDN_KEY, logicalSwitchUuid: uuidOf('ls_udn'), name: udnSwitchName(UDN, NODE) }),
  ]);
  return {
    ...dbs,
    async addPod(pod) {
      const add = new NorthboundTransaction();
      const port = podPort(add, pod);
      add.operations.push({
        op: 'mutate',
        table: 'Logical_Switch',
        where: [['name', '==', NODE]],
        mutations: [['ports', 'insert', ['set', [['named-uuid', port]]]]],
      });
      await dbs.nbWriter.transact('OVN_Northbound', add.operations);
    },
    async removePod(pod) {
      const [found] = (await dbs.nbWriter.transact('OVN_Northbound', [
        { op: 'select', table: 'Logical_Switch_Port', where: [['name', '==', `${pod.namespace}_${pod.name}`]], columns: ['_uuid'] },
      ])) as [{ rows: { _uuid: [string, string] }[] }];
      const uuid = found.rows[0]!._uuid;
      await dbs.nbWriter.transact('OVN_Northbound', [
        { op: 'mutate', table: 'Logical_Switch', where: [['name', '==', NODE]], mutations: [['ports', 'delete', ['set', [uuid]]]] },
      ]);
    },
  };
}

/** The psample group of the node's collector set, as ovn-kubernetes makes it. */
export const PSAMPLE_GROUP = 42;

/** A sample of an IPv4 packet on the node, as OVS takes it: probability 1 unless told, on ifindex 1 unless told. */
export interface NodeSample {
  data: Uint8Array;
  cookie?: Uint8Array;
  at?: bigint;
  iifindex?: number;
  /** psample's rate: 2^32-1 with `probability` is probability 1. */
  rate?: number;
  probability?: boolean;
}

export interface OvnkNodeFixture {
  readonly dbs: OvnkNodeDatabases;
  readonly injector: PsampleInjector;
  /** Injects `samples` into group PSAMPLE_GROUP, in order. */
  send(...samples: NodeSample[]): void;
  /** The arguments of `command` reading what `injector` sends and resolving it through the node's databases (unix sockets). */
  cliArgs(command: 'watch' | 'top', args?: readonly string[]): string[];
}

/**
 * For a test file: the node's databases and an injector into the file's namespace, started
 * before its tests and stopped after them.
 */
export function useOvnkNode(netns: { readonly name: string }, usersockGroup: number, options: { ssl?: boolean } = {}): OvnkNodeFixture {
  const fixture = {
    send: (...samples: NodeSample[]) => {
      for (const sample of samples) {
        fixture.injector.send(
          encodePsample({
            group: PSAMPLE_GROUP,
            proto: 0x800,
            iifindex: sample.iifindex ?? 1,
            data: sample.data,
            ...(sample.cookie === undefined ? {} : { userCookie: sample.cookie }),
            ...(sample.at === undefined ? {} : { timestampNs: sample.at }),
            rate: sample.rate ?? 0xffffffff,
            probability: sample.probability ?? true,
          }),
        );
      }
    },
    cliArgs: (command: 'watch' | 'top', args: readonly string[] = []) =>
      injectedSourceArgs(command, netns.name, usersockGroup, [
        '--nb',
        fixture.dbs.nb.unixRemote,
        '--sb',
        fixture.dbs.sb.unixRemote,
        ...args,
      ]),
  } as { dbs: OvnkNodeDatabases; injector: PsampleInjector } & Pick<OvnkNodeFixture, 'send' | 'cliArgs'>;
  beforeAll(async () => {
    fixture.dbs = await startOvnkNodeDatabases(options);
    fixture.injector = createInjector({ protocol: 'usersock', groupId: usersockGroup, netns: netns.name });
  });
  afterAll(async () => {
    fixture.injector?.close();
    await fixture.dbs?.stop();
  });
  return fixture;
}
