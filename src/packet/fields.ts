import { PACKET_FIELD_WORDS, PACKET_FIELDS as WORD, PACKET_FLAGS as FLAG } from '../native/abi.generated';
import { addon } from '../native/binding';
import type { LinkType } from './types';

/** The network layer a packet's fields come from. */
export type NetworkKind = 'arp' | 'ipv4' | 'ipv6';

/**
 * What grouping, events, filters and the formatters read of a sampled packet: the contract every
 * sample source fills. psample samples carry the packet's bytes, which the native decoder turns
 * into these fields (PacketFieldsView, one decode per packet); a source without the bytes (OVS
 * IPFIX records) fills them from its record. Only pcapng and the full-packet dump need the bytes
 * themselves: they read `NetworkEvent.samples[0].data` and say so when a source has none.
 * Addresses are text in the forms the native decoder writes (RFC 5952 for IPv6).
 */
export interface PacketFields {
  /** Where the sampled bytes start: at an Ethernet header, or (devices without one) at the IP header. */
  readonly link: LinkType;
  /** Of the network layer: after any VLAN tags, or psample's PROTO on a raw link. */
  readonly etherType: number;
  /** Bytes of the packet that were sampled (may be less than it had on the wire). */
  readonly length: number;
  /** The outermost VLAN tag's VID, when the packet had one in its bytes. */
  readonly vlan: number | undefined;
  readonly network: NetworkKind | undefined;
  /** The IP source, or the ARP sender's protocol address; undefined when the packet has none. */
  readonly src: string | undefined;
  /** The IP destination, or the ARP target's protocol address. */
  readonly dst: string | undefined;
  /** The IP protocol (IPv6: after the extension headers that were read); undefined without IP. */
  readonly protocol: number | undefined;
  /** TTL or hop limit; undefined without IP. */
  readonly ttl: number | undefined;
  /** TCP, UDP or SCTP ports (also of a header cut after them); undefined otherwise. */
  readonly srcPort: number | undefined;
  readonly dstPort: number | undefined;
  /** ICMP or ICMPv6 type and code; undefined otherwise. */
  readonly icmpType: number | undefined;
  readonly icmpCode: number | undefined;
  /** The data ends before the packet its headers describe. */
  readonly truncated: boolean;
}

const NETWORKS: readonly (NetworkKind | undefined)[] = [undefined, 'arp', 'ipv4', 'ipv6'];
// native/packet/packet_decoder.h TransportKind.
const TRANSPORT_TCP = 1;
const TRANSPORT_SCTP = 3;
const TRANSPORT_ICMP = 4;
const TRANSPORT_ICMPV6 = 5;
const TRANSPORT_PORTS = 6;
const NETWORK_ARP = 1;

/**
 * The fields of a packet the native decoder decoded (native/packet/packet_fields.h): a slot of
 * PACKET_FIELD_WORDS words in `words`, its address text in `texts`, read when asked. Made for a
 * whole batch at once (PsampleBatch) or for one packet (packetFields()). The native writers of
 * the lines that show the packet read the same slot again, so the packet is decoded once.
 */
export class PacketFieldsView implements PacketFields {
  /** @internal The words of the batch (or of this packet alone). */
  readonly words: Uint32Array;
  /** @internal Where this packet's words start in `words`, in slots. */
  readonly slot: number;
  readonly #base: number;
  readonly #texts: string;
  #src: string | undefined | null = null;
  #dst: string | undefined | null = null;
  // The packet's bytes, or the buffer they lie in: a view is made only for what reads them (the
  // human tuple), not for every packet of a batch.
  #data: Uint8Array | ArrayBuffer;
  readonly #dataAt: number;
  readonly #dataLength: number;

  /** @internal `data`: the packet's bytes, or the buffer that holds them at `dataAt`. */
  constructor(words: Uint32Array, slot: number, texts: string, data: Uint8Array | ArrayBuffer, dataAt = 0, dataLength = 0) {
    this.words = words;
    this.slot = slot;
    this.#data = data;
    this.#dataAt = dataAt;
    this.#dataLength = dataLength;
    this.#base = slot * PACKET_FIELD_WORDS;
    this.#texts = texts;
  }

  /** @internal The packet's bytes. */
  get data(): Uint8Array {
    const data = this.#data;
    if (data instanceof Uint8Array) return data;
    return (this.#data = new Uint8Array(data, this.#dataAt, this.#dataLength));
  }

  #word(index: number): number {
    return this.words[this.#base + index]!;
  }

  #kinds(): number {
    return this.#word(WORD.kinds);
  }

  #text(index: number): string | undefined {
    const at = this.#word(index);
    const length = at & 0xff;
    return length === 0 ? undefined : this.#texts.substring(at >>> 8, (at >>> 8) + length);
  }

  get link(): LinkType {
    return this.#word(WORD.flags) & FLAG.rawLink ? 'raw' : 'ethernet';
  }

  get etherType(): number {
    return this.#word(WORD.etherType);
  }

  get length(): number {
    return this.#word(WORD.length);
  }

  get vlan(): number | undefined {
    return this.#kinds() >>> 24 === 0 ? undefined : this.#word(WORD.vlan) & 0x0fff;
  }

  get network(): NetworkKind | undefined {
    return NETWORKS[this.#kinds() & 0xff];
  }

  get src(): string | undefined {
    if (this.#src === null) this.#src = this.#text(WORD.srcText);
    return this.#src;
  }

  get dst(): string | undefined {
    if (this.#dst === null) this.#dst = this.#text(WORD.dstText);
    return this.#dst;
  }

  #ip(): boolean {
    const network = this.#kinds() & 0xff;
    return network !== 0 && network !== NETWORK_ARP;
  }

  get protocol(): number | undefined {
    return this.#ip() ? this.#word(WORD.protocol) : undefined;
  }

  get ttl(): number | undefined {
    return this.#ip() ? this.#word(WORD.ttl) : undefined;
  }

  #transport(): number {
    return (this.#kinds() >>> 8) & 0xff;
  }

  #hasPorts(): boolean {
    const transport = this.#transport();
    return (transport >= TRANSPORT_TCP && transport <= TRANSPORT_SCTP) || transport === TRANSPORT_PORTS;
  }

  get srcPort(): number | undefined {
    return this.#hasPorts() ? this.#word(WORD.srcPort) : undefined;
  }

  get dstPort(): number | undefined {
    return this.#hasPorts() ? this.#word(WORD.dstPort) : undefined;
  }

  #icmp(): boolean {
    const transport = this.#transport();
    return transport === TRANSPORT_ICMP || transport === TRANSPORT_ICMPV6;
  }

  get icmpType(): number | undefined {
    return this.#icmp() ? this.#word(WORD.icmp) & 0xff : undefined;
  }

  get icmpCode(): number | undefined {
    return this.#icmp() ? (this.#word(WORD.icmp) >>> 8) & 0xff : undefined;
  }

  get truncated(): boolean {
    return (this.#word(WORD.flags) & FLAG.truncated) !== 0;
  }

  /** @internal FNV-1a of the packet's bytes: the samples of one packet carry the same bytes. */
  get hash(): number {
    return this.#word(WORD.hash);
  }

  /** The fields as a plain object, for logging and comparing. */
  toObject(): PacketFields {
    const { link, etherType, length, vlan, network, src, dst, protocol, ttl, srcPort, dstPort, icmpType, icmpCode, truncated } = this;
    return { link, etherType, length, vlan, network, src, dst, protocol, ttl, srcPort, dstPort, icmpType, icmpCode, truncated };
  }
}

/**
 * The fields of one sampled packet, decoded natively. `proto` is psample's PROTO attribute (the
 * skb ethertype, host order). Throws a TypeError for data that is no Uint8Array or a proto outside
 * 0-65535. A batch's samples are decoded together, which costs less: PsampleBatch does it.
 */
export function packetFields(data: Uint8Array, proto: number): PacketFieldsView {
  const words = new Uint32Array(PACKET_FIELD_WORDS);
  const texts = addon.decodePacketFields(data, proto, words);
  return new PacketFieldsView(words, 0, texts, data);
}
