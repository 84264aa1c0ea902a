/** Where the sampled bytes start: at an Ethernet header, or (devices without one) at the IP header. */
export type LinkType = 'ethernet' | 'raw';

/** A header, or the bytes after the last header ('payload'), that a problem was found in. */
export type PacketLayer =
  'ethernet' | 'vlan' | 'arp' | 'ipv4' | 'ipv6' | 'ipv6-extension' | 'tcp' | 'udp' | 'sctp' | 'icmp' | 'icmpv6' | 'payload';

/** One 802.1Q / 802.1ad tag, outermost first. */
export interface VlanTag {
  tpid: number;
  pcp: number;
  dei: boolean;
  vid: number;
}

export interface EthernetHeader {
  dst: string;
  src: string;
  /** Tags still in the data; a tag the NIC or kernel offloaded into skb metadata is not here. */
  vlans: VlanTag[];
}

export interface ArpPacket {
  kind: 'arp';
  hardwareType: number;
  protocolType: number;
  op: number;
  /** Addresses are decoded only for Ethernet / IPv4 ARP, the only kind an OVN network carries. */
  senderMac?: string;
  senderIp?: string;
  targetMac?: string;
  targetIp?: string;
}

export interface Ipv4Packet {
  kind: 'ipv4';
  version: 4;
  /** Header length in 32-bit words; options beyond the first 20 bytes are skipped. */
  ihl: number;
  dscp: number;
  ecn: number;
  totalLength: number;
  id: number;
  dontFragment: boolean;
  moreFragments: boolean;
  /** In bytes (the header field times 8), so it compares directly with payload sizes. */
  fragmentOffset: number;
  ttl: number;
  protocol: number;
  src: string;
  dst: string;
}

export type Ipv6ExtensionName = 'hop-by-hop' | 'routing' | 'fragment' | 'destination-options' | 'authentication';

export interface Ipv6Extension {
  /** The protocol number that announced this header. */
  protocol: number;
  name: Ipv6ExtensionName;
  /** Bytes the header occupies. */
  length: number;
}

export interface Ipv6Fragment {
  /** In bytes (the header field times 8). */
  offset: number;
  moreFragments: boolean;
  id: number;
}

export interface Ipv6Packet {
  kind: 'ipv6';
  version: 6;
  dscp: number;
  ecn: number;
  flowLabel: number;
  payloadLength: number;
  nextHeader: number;
  hopLimit: number;
  src: string;
  dst: string;
  /** Extension headers in wire order. */
  extensions: Ipv6Extension[];
  /** Upper-layer protocol after the extension headers that could be read. */
  protocol: number;
  fragment?: Ipv6Fragment;
}

export type NetworkLayer = ArpPacket | Ipv4Packet | Ipv6Packet;

export type TcpFlag = 'FIN' | 'SYN' | 'RST' | 'PSH' | 'ACK' | 'URG' | 'ECE' | 'CWR';

export interface TcpSegment {
  kind: 'tcp';
  srcPort: number;
  dstPort: number;
  seq: number;
  ack: number;
  /** Header length in 32-bit words. */
  dataOffset: number;
  flags: TcpFlag[];
  window: number;
}

export interface UdpDatagram {
  kind: 'udp';
  srcPort: number;
  dstPort: number;
  length: number;
}

export interface SctpPacket {
  kind: 'sctp';
  srcPort: number;
  dstPort: number;
  verificationTag: number;
}

export interface IcmpMessage {
  kind: 'icmp';
  type: number;
  code: number;
  /** Known types only, e.g. 'echo-request'. */
  name?: string;
  /** Echo request / reply only. */
  id?: number;
  seq?: number;
}

export interface Icmpv6Message {
  kind: 'icmpv6';
  type: number;
  code: number;
  name?: string;
  id?: number;
  seq?: number;
  /** Neighbor solicitation / advertisement and redirect: the address asked or told about. */
  target?: string;
}

/** A TCP, UDP or SCTP header cut short after its ports: the ports still identify the flow. */
export interface TransportPorts {
  kind: 'ports';
  protocol: 'tcp' | 'udp' | 'sctp';
  srcPort: number;
  dstPort: number;
}

export type TransportLayer = TcpSegment | UdpDatagram | SctpPacket | IcmpMessage | Icmpv6Message | TransportPorts;

/** A protocol this decoder does not read further into. */
export interface UnknownProtocol {
  kind: 'ethertype' | 'ip-protocol';
  value: number;
}

export interface MalformedHeader {
  layer: PacketLayer;
  reason: string;
}

export interface DecodedPacket {
  link: LinkType;
  /** Bytes of sampled data (may be less than the packet on the wire). */
  length: number;
  /** Ethertype of the network layer: after any VLAN tags, or psample's PROTO on a raw link. */
  etherType: number;
  ethernet?: EthernetHeader;
  network?: NetworkLayer;
  /** Absent for non-first fragments, which carry no transport header. */
  transport?: TransportLayer;
  unknown?: UnknownProtocol;
  /** True when the data ends before the packet its headers describe. */
  truncated: boolean;
  /** The first layer the data ended in. */
  truncatedLayer?: PacketLayer;
  /** Set when a header contradicts itself; decoding stops at that layer. */
  malformed?: MalformedHeader;
}
