import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { decodePacket, describePacket, type DecodedPacket, type PacketLayer } from '../../src/packet/index.js';
import { concat, ethernet, icmp, ipv4, ipv6, sctp, tcp, u16, udp, viewInLargerBuffer, type VlanSpec } from './packet-frames.js';

// decodePacket (src/packet) over generated input: any bytes and any proto never make it throw
// nor read past the data; frames built from random header fields decode back to those fields;
// and every cut of such a frame is marked truncated, in the layer the cut falls in.

const ETH_IPV4 = 0x0800;
const ETH_IPV6 = 0x86dd;
const VLAN_TPIDS = [0x8100, 0x88a8, 0x9100];

const u8 = fc.integer({ min: 0, max: 0xff });
const u16s = fc.integer({ min: 0, max: 0xffff });
const u32s = fc.integer({ min: 0, max: 0xffffffff });
// Zero runs and the IPv4-mapped prefix are what the text form of IPv6 compresses: make them common.
const ipv6Group = fc.oneof(fc.constant(0), fc.constant(0xffff), u16s);

type Transport =
  | { kind: 'tcp'; srcPort: number; dstPort: number; seq: number; ack: number; flags: number; window: number }
  | { kind: 'udp'; srcPort: number; dstPort: number }
  | { kind: 'sctp'; srcPort: number; dstPort: number; verificationTag: number }
  | { kind: 'echo'; request: boolean; id: number; seq: number };

type Network =
  | { version: 4; src: number[]; dst: number[]; ttl: number; id: number; tos: number; dontFragment: boolean }
  | { version: 6; src: number[]; dst: number[]; hopLimit: number; trafficClass: number; flowLabel: number };

interface FrameSpec {
  link: 'ethernet' | 'raw';
  dstMac: Uint8Array;
  srcMac: Uint8Array;
  vlans: VlanSpec[];
  network: Network;
  transport: Transport;
  payload: Uint8Array;
}

const vlanTag = fc.record({
  tpid: fc.constantFrom(...VLAN_TPIDS),
  pcp: fc.integer({ min: 0, max: 7 }),
  dei: fc.boolean(),
  vid: fc.integer({ min: 0, max: 0xfff }),
});
const network: fc.Arbitrary<Network> = fc.oneof(
  fc.record({
    version: fc.constant(4 as const),
    src: fc.array(u8, { minLength: 4, maxLength: 4 }),
    dst: fc.array(u8, { minLength: 4, maxLength: 4 }),
    ttl: u8,
    id: u16s,
    tos: u8,
    dontFragment: fc.boolean(),
  }),
  fc.record({
    version: fc.constant(6 as const),
    src: fc.array(ipv6Group, { minLength: 8, maxLength: 8 }),
    dst: fc.array(ipv6Group, { minLength: 8, maxLength: 8 }),
    hopLimit: u8,
    trafficClass: u8,
    flowLabel: fc.integer({ min: 0, max: 0xfffff }),
  }),
);
const transport: fc.Arbitrary<Transport> = fc.oneof(
  fc.record({ kind: fc.constant('tcp' as const), srcPort: u16s, dstPort: u16s, seq: u32s, ack: u32s, flags: u8, window: u16s }),
  fc.record({ kind: fc.constant('udp' as const), srcPort: u16s, dstPort: u16s }),
  fc.record({ kind: fc.constant('sctp' as const), srcPort: u16s, dstPort: u16s, verificationTag: u32s }),
  fc.record({ kind: fc.constant('echo' as const), request: fc.boolean(), id: u16s, seq: u16s }),
);
const frameSpec: fc.Arbitrary<FrameSpec> = fc
  .record({
    link: fc.constantFrom('ethernet' as const, 'raw' as const),
    dstMac: fc.uint8Array({ minLength: 6, maxLength: 6 }),
    srcMac: fc.uint8Array({ minLength: 6, maxLength: 6 }),
    vlans: fc.array(vlanTag, { maxLength: 2 }),
    network,
    transport,
    payload: fc.uint8Array({ maxLength: 48 }),
  })
  .map((spec) => (spec.link === 'raw' ? { ...spec, vlans: [] } : spec));

const ipv4Text = (bytes: number[]): string => bytes.join('.');
const ipv6Full = (groups: number[]): string => groups.map((g) => g.toString(16).padStart(4, '0')).join(':');
// RFC 5952 as the WHATWG URL serializer writes it (the longest, first, run of two or more zero
// groups as ::), and section 5's dotted quad for IPv4-mapped addresses.
function ipv6Text(groups: number[]): string {
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `::ffff:${[groups[6]! >>> 8, groups[6]! & 0xff, groups[7]! >>> 8, groups[7]! & 0xff].join('.')}`;
  }
  return new URL(`http://[${ipv6Full(groups)}]/`).hostname.slice(1, -1);
}
const macText = (bytes: Uint8Array): string =>
  Buffer.from(bytes)
    .toString('hex')
    .replace(/(..)(?!$)/g, '$1:');

interface Built {
  bytes: Uint8Array;
  proto: number;
  /** Where each layer's header ends, in order: the layer a cut before that end falls in. */
  layers: Array<[PacketLayer, number]>;
}

function build(spec: FrameSpec): Built {
  const t = spec.transport;
  const v6 = spec.network.version === 6;
  const protocol = t.kind === 'tcp' ? 6 : t.kind === 'udp' ? 17 : t.kind === 'sctp' ? 132 : v6 ? 58 : 1;
  const segment =
    t.kind === 'tcp'
      ? tcp(t, spec.payload)
      : t.kind === 'udp'
        ? udp(t.srcPort, t.dstPort, spec.payload)
        : t.kind === 'sctp'
          ? sctp(t.srcPort, t.dstPort, t.verificationTag, spec.payload)
          : icmp(v6 ? (t.request ? 128 : 129) : t.request ? 8 : 0, 0, concat(u16(t.id), u16(t.seq)), spec.payload);
  const n = spec.network;
  const packet =
    n.version === 4
      ? ipv4(
          { src: ipv4Text(n.src), dst: ipv4Text(n.dst), protocol, ttl: n.ttl, id: n.id, tos: n.tos, dontFragment: n.dontFragment },
          segment,
        )
      : ipv6(
          {
            src: ipv6Full(n.src),
            dst: ipv6Full(n.dst),
            nextHeader: protocol,
            hopLimit: n.hopLimit,
            trafficClass: n.trafficClass,
            flowLabel: n.flowLabel,
          },
          segment,
        );
  const etherType = v6 ? ETH_IPV6 : ETH_IPV4;
  const transportLayer: PacketLayer = t.kind === 'echo' ? (v6 ? 'icmpv6' : 'icmp') : t.kind;
  const transportBytes = t.kind === 'tcp' ? 20 : t.kind === 'sctp' ? 12 : 8;
  const linkBytes = spec.link === 'raw' ? 0 : 14 + 4 * spec.vlans.length;
  const ipBytes = v6 ? 40 : 20;
  const layers: Array<[PacketLayer, number]> = [];
  if (spec.link === 'ethernet') {
    layers.push(['ethernet', 14]);
    spec.vlans.forEach((_, i) => layers.push(['vlan', 14 + 4 * (i + 1)]));
  }
  layers.push([v6 ? 'ipv6' : 'ipv4', linkBytes + ipBytes], [transportLayer, linkBytes + ipBytes + transportBytes]);
  layers.push(['payload', linkBytes + packet.length]);
  if (spec.link === 'raw') return { bytes: packet, proto: etherType, layers };
  const outer = spec.vlans[0]?.tpid ?? etherType;
  return { bytes: ethernet(etherType, packet, spec.vlans, { dst: spec.dstMac, src: spec.srcMac }), proto: outer, layers };
}

// The reading the format allows: a raw IP packet whose source address spells the ethertype or a
// VLAN TPID where an Ethernet header has its type is read either way (native/packet/packet_decoder.cc, detect_raw_link).
function unambiguous(spec: FrameSpec, built: Built): boolean {
  if (spec.link === 'ethernet') return true;
  const at12 = (built.bytes[12]! << 8) | built.bytes[13]!;
  return at12 !== built.proto && !VLAN_TPIDS.includes(at12);
}

function expectedFields(spec: FrameSpec, built: Built): Partial<DecodedPacket> {
  const n = spec.network;
  const t = spec.transport;
  const linkBytes = spec.link === 'raw' ? 0 : 14 + 4 * spec.vlans.length;
  const ipLength = built.bytes.length - linkBytes;
  const protocol = t.kind === 'tcp' ? 6 : t.kind === 'udp' ? 17 : t.kind === 'sctp' ? 132 : n.version === 6 ? 58 : 1;
  const transportLength = ipLength - (n.version === 6 ? 40 : 20);
  return {
    link: spec.link,
    length: built.bytes.length,
    etherType: n.version === 6 ? ETH_IPV6 : ETH_IPV4,
    truncated: false,
    ...(spec.link === 'ethernet' ? { ethernet: { dst: macText(spec.dstMac), src: macText(spec.srcMac), vlans: spec.vlans } } : {}),
    network:
      n.version === 4
        ? {
            kind: 'ipv4',
            version: 4,
            ihl: 5,
            dscp: n.tos >>> 2,
            ecn: n.tos & 3,
            totalLength: ipLength,
            id: n.id,
            dontFragment: n.dontFragment,
            moreFragments: false,
            fragmentOffset: 0,
            ttl: n.ttl,
            protocol,
            src: ipv4Text(n.src),
            dst: ipv4Text(n.dst),
          }
        : {
            kind: 'ipv6',
            version: 6,
            dscp: n.trafficClass >>> 2,
            ecn: n.trafficClass & 3,
            flowLabel: n.flowLabel,
            payloadLength: transportLength,
            nextHeader: protocol,
            hopLimit: n.hopLimit,
            src: ipv6Text(n.src),
            dst: ipv6Text(n.dst),
            extensions: [],
            protocol,
          },
    transport:
      t.kind === 'tcp'
        ? {
            kind: 'tcp',
            srcPort: t.srcPort,
            dstPort: t.dstPort,
            seq: t.seq,
            ack: t.ack,
            dataOffset: 5,
            window: t.window,
            flags: (['FIN', 'SYN', 'RST', 'PSH', 'ACK', 'URG', 'ECE', 'CWR'] as const).filter((_, bit) => (t.flags & (1 << bit)) !== 0),
          }
        : t.kind === 'udp'
          ? { kind: 'udp', srcPort: t.srcPort, dstPort: t.dstPort, length: transportLength }
          : t.kind === 'sctp'
            ? { kind: 'sctp', srcPort: t.srcPort, dstPort: t.dstPort, verificationTag: t.verificationTag }
            : {
                kind: n.version === 6 ? 'icmpv6' : 'icmp',
                type: n.version === 6 ? (t.request ? 128 : 129) : t.request ? 8 : 0,
                code: 0,
                name: t.request ? 'echo-request' : 'echo-reply',
                id: t.id,
                seq: t.seq,
              },
  };
}

describe('decodePacket (property-based)', () => {
  it('never throws nor reads past the data, on any bytes and any proto; truncatedLayer is set exactly when truncated', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 160 }),
        fc.oneof(fc.constantFrom(ETH_IPV4, ETH_IPV6, 0x0806, ...VLAN_TPIDS, 0x88cc, 0), u16s),
        (bytes, proto) => {
          const packet = decodePacket(bytes, proto);
          expect(decodePacket(viewInLargerBuffer(bytes), proto)).toEqual(packet);
          expect(packet.length).toBe(bytes.length);
          expect(packet.truncatedLayer !== undefined).toBe(packet.truncated);
          expect(typeof describePacket(bytes, proto)).toBe('string');
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('decodes a frame built from random header fields back to those fields', () => {
    fc.assert(
      fc.property(frameSpec, (spec) => {
        const built = build(spec);
        fc.pre(unambiguous(spec, built));
        const packet = decodePacket(built.bytes, built.proto);
        expect(packet).toEqual(expectedFields(spec, built));
      }),
      { numRuns: 3000 },
    );
  });

  it('marks every cut of such a frame truncated, in the layer the cut falls in', () => {
    fc.assert(
      fc.property(frameSpec, fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), (spec, where) => {
        const built = build(spec);
        fc.pre(unambiguous(spec, built));
        const cut = Math.floor(where * built.bytes.length);
        const packet = decodePacket(built.bytes.slice(0, cut), built.proto);
        expect(decodePacket(viewInLargerBuffer(built.bytes, cut), built.proto)).toEqual(packet);
        expect(packet.truncated).toBe(true);
        expect(packet.malformed).toBeUndefined();
        // Under 14 bytes an Ethernet frame and a raw IP packet cannot be told apart (nor from no byte at all).
        if ((spec.link === 'ethernet' && cut < 14) || cut === 0) return;
        const layer = built.layers.find(([, end]) => cut < end)?.[0];
        expect(packet.truncatedLayer).toBe(layer);
      }),
      { numRuns: 3000 },
    );
  });
});
