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
 * cookie OVS would give psample, the time it was taken, the weight as the sampling probability it
 * stands for (weight 1 = probability 2^32-1, psample's form), the octets as the original size.
 * There is no psample group (0), no kernel ifindex (0) and no data.
 */
export function ipfixSampleMessage(sample: IpfixSample): PsampleMessage {
  const point = sample.observationPointId;
  // One object shape whether or not there is a cookie (undefined reads as psample's absent one), and
  // no DataView: this runs once per record on watch's path.
  let userCookie: Uint8Array | undefined;
  if (point !== undefined) {
    const domain = sample.observationDomainId;
    userCookie = new Uint8Array(8);
    userCookie[0] = domain >>> 24;
    userCookie[1] = domain >>> 16;
    userCookie[2] = domain >>> 8;
    userCookie[3] = domain;
    userCookie[4] = point >>> 24;
    userCookie[5] = point >>> 16;
    userCookie[6] = point >>> 8;
    userCookie[7] = point;
  }
  return {
    command: 'sample',
    group: 0,
    groupSeq: 0,
    iifindex: 0,
    origSize: sample.octets ?? 0,
    rate: Math.max(1, Math.round(MAX_PROBABILITY / Math.max(1, sample.weight))),
    probability: true,
    timestampNs: sampleTimeNs(sample),
    proto: sample.packet.etherType ?? 0,
    data: NO_BYTES,
    userCookie,
  };
}

// Without flowStartDeltaMicroseconds the export time is all there is, in whole seconds: the
// records of a second share one bigint.
let lastExportTime = -1;
let lastExportTimeNs = 0n;

/** When the sample was taken, as psample's kernel time: the record's flow start, else its export second. */
function sampleTimeNs(sample: IpfixSample): bigint {
  if (sample.flowStartUs !== undefined) return BigInt(sample.flowStartUs) * 1000n;
  const exportTime = sample.exportTime;
  if (exportTime !== lastExportTime) {
    lastExportTime = exportTime;
    lastExportTimeNs = BigInt(exportTime) * 1_000_000_000n;
  }
  return lastExportTimeNs;
}

/** Longer than any identity: two MACs, two IPv6 addresses (with an IPv4 tail) and the rest, or two tunnel addresses more. */
const IDENTITY_BYTES = 512;

/**
 * What tells the records of one packet from those of another, as bytes: the samples OVN takes of
 * one packet at several stages are separate records with the same packet fields (the grouper
 * compares these where psample's are compared by the packet's bytes). The egress interface and
 * the direction are left out: they say where the sample action ran, not which packet it was.
 * Written into one scratch buffer reused for every record (`bytes`, valid until the next call):
 * only a record that starts a new packet needs them kept (`keep()`).
 */
export class IpfixPacketIdentity {
  readonly bytes = Buffer.allocUnsafeSlow(IDENTITY_BYTES);
  length = 0;

  /** Writes `packet`'s identity into `bytes`; returns its FNV-1a hash. */
  write(packet: IpfixPacketFields): number {
    const text =
      `${packet.srcMac}|${packet.dstMac}|${packet.etherType}|${packet.vlanId}|${packet.src}|${packet.dst}|${packet.protocol}|` +
      `${packet.ttl}|${packet.dscp}|${packet.flowLabel}|${packet.srcPort}|${packet.dstPort}|${packet.icmpType}|${packet.icmpCode}|` +
      `${packet.ingressInterface}|${packet.tunnel?.src}|${packet.tunnel?.dst}`;
    this.length = this.bytes.write(text, 0, 'latin1');
    return fnv1a(this.bytes, this.length);
  }

  /** A copy of the last identity written, for a packet that keeps it. */
  keep(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }
}

/** FNV-1a of `bytes`, as native/packet/packet_fields.h hashes a packet's bytes. */
function fnv1a(bytes: Uint8Array, length = bytes.length): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < length; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  return hash >>> 0;
}
