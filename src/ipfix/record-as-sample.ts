import type { NetworkKind, PacketFields } from '../packet/fields';
import type { PsampleMessage } from '../psample/types';
import type { IpfixPacketFields, IpfixSample } from './types';

// An IPFIX record as the event pipeline reads a sample (src/events/network-event.ts): the
// packet's fields from the record, and a sample without bytes. What stays IPFIX's own (the
// exporter, the weight, the interface names) is read from the record itself (NetworkEvent.ipfix).

const NETWORKS: Readonly<Record<number, NetworkKind>> = { 0x0800: 'ipv4', 0x86dd: 'ipv6', 0x0806: 'arp' };
const ICMP = new Set([1, 58]);
const PORTS = new Set([6, 17, 132]);
const NO_BYTES = new Uint8Array(0);
const MAX_PROBABILITY = 0xffffffff;

function networkOfAddress(address: string | undefined): NetworkKind | undefined {
  return address === undefined ? undefined : address.includes(':') ? 'ipv6' : 'ipv4';
}

/**
 * The record's fields as PacketFields. OVS's templates carry no ARP addresses and no packet
 * bytes: `length` is 0 (nothing was sampled), an ARP packet has no `src`/`dst`.
 */
export function ipfixPacketFields(packet: IpfixPacketFields): PacketFields {
  // A template without ethernetType (not one of OVS's) still says IPv4 or IPv6 by its addresses.
  const network = packet.etherType === undefined ? networkOfAddress(packet.src) : NETWORKS[packet.etherType];
  const etherType = packet.etherType ?? (network === 'ipv4' ? 0x0800 : network === 'ipv6' ? 0x86dd : 0);
  const ip = network === 'ipv4' || network === 'ipv6';
  const protocol = ip ? packet.protocol : undefined;
  const ports = protocol !== undefined && PORTS.has(protocol);
  const icmp = protocol !== undefined && ICMP.has(protocol);
  return {
    link: 'ethernet',
    etherType,
    length: 0,
    vlan: packet.vlanId,
    network,
    src: ip ? packet.src : undefined,
    dst: ip ? packet.dst : undefined,
    protocol,
    ttl: ip ? packet.ttl : undefined,
    srcPort: ports ? packet.srcPort : undefined,
    dstPort: ports ? packet.dstPort : undefined,
    icmpType: icmp ? packet.icmpType : undefined,
    icmpCode: icmp ? packet.icmpCode : undefined,
    truncated: false,
  };
}

/**
 * The record as a psample-shaped sample: its cookie (header domain, IE 138) as the 8-byte user
 * cookie OVS would give psample, the export time, the weight as the sampling probability it
 * stands for (weight 1 = probability 2^32-1, psample's form), the octets as the original size.
 * There is no psample group (0), no kernel ifindex (0) and no data.
 */
export function ipfixSampleMessage(sample: IpfixSample): PsampleMessage {
  const point = sample.observationPointId;
  let userCookie: Uint8Array | undefined;
  if (point !== undefined) {
    userCookie = new Uint8Array(8);
    const view = new DataView(userCookie.buffer);
    view.setUint32(0, sample.observationDomainId, false);
    view.setUint32(4, point, false);
  }
  return {
    command: 'sample',
    group: 0,
    groupSeq: 0,
    iifindex: 0,
    origSize: sample.octets ?? 0,
    rate: Math.max(1, Math.round(MAX_PROBABILITY / Math.max(1, sample.weight))),
    probability: true,
    timestampNs: BigInt(sample.exportTime) * 1_000_000_000n,
    proto: sample.packet.etherType ?? 0,
    data: NO_BYTES,
    ...(userCookie === undefined ? {} : { userCookie }),
  };
}

/**
 * What tells the records of one packet from those of another, as bytes: the samples OVN takes of
 * one packet at several stages are separate records with the same packet fields (the grouper
 * compares these where psample's are compared by the packet's bytes). The egress interface and
 * the direction are left out: they say where the sample action ran, not which packet it was.
 */
export function ipfixPacketIdentity(packet: IpfixPacketFields): Uint8Array {
  return Buffer.from(
    `${packet.srcMac}|${packet.dstMac}|${packet.etherType}|${packet.vlanId}|${packet.src}|${packet.dst}|${packet.protocol}|` +
      `${packet.ttl}|${packet.dscp}|${packet.flowLabel}|${packet.srcPort}|${packet.dstPort}|${packet.icmpType}|${packet.icmpCode}|` +
      `${packet.ingressInterface}|${packet.tunnel?.src}|${packet.tunnel?.dst}`,
    'latin1',
  );
}

/** FNV-1a of `bytes`, as native/packet/packet_fields.h hashes a packet's bytes. */
export function fnv1a(bytes: Uint8Array): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  return hash >>> 0;
}
