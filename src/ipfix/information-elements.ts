/**
 * The Information Elements this collector reads (RFC 7012 / IANA "IPFIX Information Elements",
 * and VMware's enterprise elements, PEN 6876, that Open vSwitch exports for tunnels: its
 * ofproto/ofproto-dpif-ipfix.c). Every other element of a template is skipped by its length.
 * The one table: the record decoder, the tests' tshark cross-check and the docs read these names.
 */
export const VMWARE_PEN = 6876;

export const IE = {
  octetDeltaCount: 1,
  packetDeltaCount: 2,
  protocolIdentifier: 4,
  sourceTransportPort: 7,
  sourceIPv4Address: 8,
  ingressInterface: 10,
  destinationTransportPort: 11,
  destinationIPv4Address: 12,
  egressInterface: 14,
  sourceIPv6Address: 27,
  destinationIPv6Address: 28,
  flowLabelIPv6: 31,
  sourceMacAddress: 56,
  vlanId: 58,
  ipVersion: 60,
  flowDirection: 61,
  destinationMacAddress: 80,
  interfaceName: 82,
  observationPointId: 138,
  exportingProcessId: 144,
  flowStartDeltaMicroseconds: 158,
  notSentPacketTotalCount: 167,
  icmpTypeIPv4: 176,
  icmpCodeIPv4: 177,
  icmpTypeIPv6: 178,
  icmpCodeIPv6: 179,
  ipTTL: 192,
  ipDiffServCodePoint: 195,
  dot1qVlanId: 243,
  dot1qPriority: 244,
  ethernetType: 256,
} as const;

/** VMware's tunnel elements (enterprise 6876), as OVS exports them for a packet that entered or left by a tunnel. */
export const VMWARE_IE = {
  tunnelType: 891,
  tunnelKey: 892,
  tunnelSourceIPv4Address: 893,
  tunnelDestinationIPv4Address: 894,
  tunnelProtocolIdentifier: 895,
  tunnelSourceTransportPort: 896,
  tunnelDestinationTransportPort: 897,
} as const;

/** tunnelType values (OVS's enum dpif_ipfix_tunnel_type; 6 is reserved, 5 is IPsec GRE in newer OVS). */
export const TUNNEL_TYPES: Readonly<Record<number, string>> = { 1: 'vxlan', 2: 'gre', 3: 'lisp', 4: 'stt', 5: 'ipsec-gre', 7: 'geneve' };
