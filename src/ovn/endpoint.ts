/**
 * Who a packet's address belongs to, from the OVN northbound ports ovn-kubernetes writes:
 * - pod: a Logical_Switch_Port with external_ids pod=true (namespace/name);
 * - node: a node's management port (k8s-<node>);
 * - cluster: inside a subnet of the network's switches, but no local port has it (a pod of
 *   another node, a gateway, a port just deleted);
 * - external: in none of them: outside the cluster.
 */
export type EndpointKind = 'pod' | 'node' | 'cluster' | 'external';

export interface Endpoint {
  readonly kind: EndpointKind;
  readonly ip: string;
  /** The pod's namespace. */
  readonly namespace?: string;
  /** The pod's or the node's name. */
  readonly name?: string;
  /** The network: "default" or the user-defined network's name. */
  readonly network?: string;
  /** k8s.ovn.org/nad of a user-defined or secondary network's pod port. */
  readonly nad?: string;
  /** The Logical_Switch_Port. */
  readonly port?: string;
}

/** "shop/frontend", "node lab-node", "10.1.2.3 (cluster)", "203.0.113.9 (outside the cluster)". */
export function endpointText(endpoint: Endpoint): string {
  switch (endpoint.kind) {
    case 'pod':
      return `${endpoint.namespace ?? ''}/${endpoint.name ?? ''}`;
    case 'node':
      return `node ${endpoint.name ?? endpoint.ip}`;
    case 'cluster':
      return `${endpoint.ip} (cluster)`;
    default:
      return `${endpoint.ip} (outside the cluster)`;
  }
}
