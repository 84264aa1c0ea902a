/** Who sent a datagram: the exporter's address and UDP source port. */
export interface IpfixExporter {
  readonly address: string;
  readonly port: number;
}

/** The tunnel a packet entered or left by, as OVS exports it (VMware's elements 891-897). */
export interface IpfixTunnel {
  /** OVS's tunnel type number, and its name when known ('geneve', 'vxlan', 'gre', 'lisp', 'stt'). */
  readonly type?: number;
  readonly typeName?: string;
  /** The tunnel key (Geneve/VXLAN VNI, GRE key) as sent: on an OVN Geneve tunnel, the datapath key. */
  readonly key?: Uint8Array;
  readonly src?: string;
  readonly dst?: string;
  readonly protocol?: number;
  readonly srcPort?: number;
  readonly dstPort?: number;
}

/**
 * What an IPFIX record says of the packet it stands for: the fields an OVS per-flow template
 * carries, each present only when the template has it. There are no packet bytes in IPFIX.
 */
export interface IpfixPacketFields {
  /** flowDirection (61): where OVS sampled it. */
  readonly direction?: 'ingress' | 'egress';
  readonly srcMac?: string;
  readonly dstMac?: string;
  /** ethernetType (256), after any VLAN tag. */
  readonly etherType?: number;
  /** vlanId (58) or dot1qVlanId (243). */
  readonly vlanId?: number;
  readonly vlanPriority?: number;
  readonly ipVersion?: number;
  /** ipTTL (192): the TTL or hop limit. */
  readonly ttl?: number;
  /** protocolIdentifier (4): the IP protocol. */
  readonly protocol?: number;
  readonly dscp?: number;
  /** IPv4 or IPv6 source and destination, in their usual text forms. */
  readonly src?: string;
  readonly dst?: string;
  readonly flowLabel?: number;
  readonly srcPort?: number;
  readonly dstPort?: number;
  readonly icmpType?: number;
  readonly icmpCode?: number;
  /** ingressInterface (10): OVS's datapath port number. */
  readonly ingressInterface?: number;
  /** interfaceName (82) after the ingress interface: the OVS interface name (absent when OVS sends it empty). */
  readonly ingressInterfaceName?: string;
  readonly egressInterface?: number;
  readonly egressInterfaceName?: string;
  readonly tunnel?: IpfixTunnel;
}

/**
 * One IPFIX data record of a flow template, as the source delivers it: `source` is 'ipfix'.
 * OVS puts the sample action's obs_domain_id in the message header and its obs_point_id in the
 * record (observationPointId, 138): the two halves of the cookie a psample sample carries.
 */
export interface IpfixSample {
  readonly source: 'ipfix';
  readonly exporter: IpfixExporter;
  readonly observationDomainId: number;
  /** Absent when the template has no observationPointId (not an OVS sample action's record). */
  readonly observationPointId: number | undefined;
  /** The message's export time, seconds since the epoch. */
  readonly exportTime: number;
  /**
   * When the exporter took the sample, microseconds since the epoch: the export time less the
   * record's flowStartDeltaMicroseconds (158), which every OVS flow record carries. Absent when
   * the template has no such element.
   */
  readonly flowStartUs: number | undefined;
  readonly sequenceNumber: number;
  readonly templateId: number;
  /**
   * When the record's domain had no template of its own and it was decoded with the same
   * exporter's template of another domain (OVS before 3.2 sends templates for one domain only):
   * that domain.
   */
  readonly templateDomainId: number | undefined;
  /** The packets this record stands for: packetDeltaCount (2), OVS's estimate 65535 / probability; 1 without it. */
  readonly weight: number;
  /** octetDeltaCount (1) when the template has it. */
  readonly octets: number | undefined;
  readonly packet: IpfixPacketFields;
}
