// Frames for the packet decoder tests: the DATA of the real psample captures, and frames built
// here byte by byte for every protocol the decoder reads.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export interface TestFrame {
  name: string;
  /** psample PROTO for this frame. */
  proto: number;
  link: 'ethernet' | 'raw';
  bytes: Uint8Array;
  /** Bytes up to the end of the last header the decoder reads. */
  headerBytes: number;
  /** Bytes the headers account for: less than bytes.length when Ethernet padding follows. */
  packetBytes: number;
}

/**
 * The first `length` bytes of `bytes` as a view inside a larger buffer: junk before it, and the
 * rest of `bytes` then more junk after it. A decoder that read outside the view (or ignored its
 * byteOffset) would see what the data is not, and decode something else than from a copy.
 */
export function viewInLargerBuffer(bytes: Uint8Array, length = bytes.length): Uint8Array {
  const before = 16;
  const buffer = new Uint8Array(before + bytes.length + 64).fill(0x81);
  buffer.set(bytes, before);
  return buffer.subarray(before, before + length);
}

const ETH_IPV4 = 0x0800;
const ETH_ARP = 0x0806;
const ETH_IPV6 = 0x86dd;

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

export function u16(value: number): Uint8Array {
  return Uint8Array.of(value >>> 8, value & 0xff);
}

function u32(value: number): Uint8Array {
  return Uint8Array.of(value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff);
}

function mac(text: string): Uint8Array {
  return Uint8Array.from(text.split(':').map((part) => Number.parseInt(part, 16)));
}

function ip4(text: string): Uint8Array {
  return Uint8Array.from(text.split('.').map(Number));
}

/** Full (uncompressed) eight-group notation only: the tests own the compression. */
function ip6(groups: string): Uint8Array {
  return concat(...groups.split(':').map((group) => u16(Number.parseInt(group, 16))));
}

function filler(length: number, seed = 0x10): Uint8Array {
  return Uint8Array.from({ length }, (_, i) => (seed + i) & 0xff);
}

function internetChecksum(bytes: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < bytes.length; i += 2) sum += ((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

export interface VlanSpec {
  tpid: number;
  pcp: number;
  dei: boolean;
  vid: number;
}

export function ethernet(
  etherType: number,
  payload: Uint8Array,
  vlans: VlanSpec[] = [],
  macs: { dst: Uint8Array; src: Uint8Array } = { dst: mac('0a:58:0a:f4:00:0c'), src: mac('0a:58:0a:f4:00:05') },
): Uint8Array {
  const header: Uint8Array[] = [macs.dst, macs.src];
  for (const tag of vlans) header.push(u16(tag.tpid), u16((tag.pcp << 13) | (tag.dei ? 0x1000 : 0) | tag.vid));
  header.push(u16(etherType));
  return concat(...header, payload);
}

interface Ipv4Spec {
  src: string;
  dst: string;
  protocol: number;
  ttl?: number;
  id?: number;
  tos?: number;
  dontFragment?: boolean;
  moreFragments?: boolean;
  fragmentOffset?: number;
  options?: Uint8Array;
}

export function ipv4(spec: Ipv4Spec, payload: Uint8Array): Uint8Array {
  const options = spec.options ?? new Uint8Array();
  const headerLength = 20 + options.length;
  const flags = (spec.dontFragment ? 0x4000 : 0) | (spec.moreFragments ? 0x2000 : 0);
  const header = concat(
    Uint8Array.of(0x40 | (headerLength / 4), spec.tos ?? 0),
    u16(headerLength + payload.length),
    u16(spec.id ?? 0x1c46),
    u16(flags | ((spec.fragmentOffset ?? 0) / 8)),
    Uint8Array.of(spec.ttl ?? 64, spec.protocol),
    u16(0),
    ip4(spec.src),
    ip4(spec.dst),
    options,
  );
  header.set(u16(internetChecksum(header)), 10);
  return concat(header, payload);
}

interface Ipv6Spec {
  src: string;
  dst: string;
  nextHeader: number;
  hopLimit?: number;
  trafficClass?: number;
  flowLabel?: number;
}

export function ipv6(spec: Ipv6Spec, payload: Uint8Array): Uint8Array {
  const first = (6 << 28) | ((spec.trafficClass ?? 0) << 20) | (spec.flowLabel ?? 0);
  return concat(
    u32(first >>> 0),
    u16(payload.length),
    Uint8Array.of(spec.nextHeader, spec.hopLimit ?? 64),
    ip6(spec.src),
    ip6(spec.dst),
    payload,
  );
}

/** Hop-by-hop or destination options: `options` padded with PadN to a multiple of 8 bytes. */
function optionsHeader(nextHeader: number, options: Uint8Array): Uint8Array {
  const unpadded = 2 + options.length;
  const total = Math.ceil(unpadded / 8) * 8;
  const padding = total - unpadded;
  const pad =
    padding === 0
      ? new Uint8Array()
      : padding === 1
        ? Uint8Array.of(0)
        : concat(Uint8Array.of(1, padding - 2), new Uint8Array(padding - 2));
  return concat(Uint8Array.of(nextHeader, total / 8 - 1), options, pad);
}

/** Type 2 routing header (RFC 6275): one home address. */
function routingHeader(nextHeader: number, address: string): Uint8Array {
  return concat(Uint8Array.of(nextHeader, 2, 2, 1), u32(0), ip6(address));
}

function fragmentHeader(nextHeader: number, offset: number, more: boolean, id: number): Uint8Array {
  return concat(Uint8Array.of(nextHeader, 0), u16(offset | (more ? 1 : 0)), u32(id));
}

/** AH with a 12-byte ICV: 24 bytes, payload length field (24 / 4) - 2 = 4. */
function authenticationHeader(nextHeader: number): Uint8Array {
  return concat(Uint8Array.of(nextHeader, 4), u16(0), u32(0x1000), u32(1), filler(12, 0xa0));
}

interface TcpSpec {
  srcPort: number;
  dstPort: number;
  seq: number;
  ack: number;
  flags: number;
  window: number;
  options?: Uint8Array;
}

export function tcp(spec: TcpSpec, payload: Uint8Array = new Uint8Array()): Uint8Array {
  const options = spec.options ?? new Uint8Array();
  const headerLength = 20 + options.length;
  return concat(
    u16(spec.srcPort),
    u16(spec.dstPort),
    u32(spec.seq),
    u32(spec.ack),
    Uint8Array.of((headerLength / 4) << 4, spec.flags),
    u16(spec.window),
    u16(0),
    u16(0),
    options,
    payload,
  );
}

export function udp(srcPort: number, dstPort: number, payload: Uint8Array): Uint8Array {
  return concat(u16(srcPort), u16(dstPort), u16(8 + payload.length), u16(0), payload);
}

export function sctp(srcPort: number, dstPort: number, verificationTag: number, chunk: Uint8Array): Uint8Array {
  return concat(u16(srcPort), u16(dstPort), u32(verificationTag), u32(0), chunk);
}

export function icmp(type: number, code: number, rest: Uint8Array, payload: Uint8Array = new Uint8Array()): Uint8Array {
  const message = concat(Uint8Array.of(type, code), u16(0), rest, payload);
  message.set(u16(internetChecksum(message)), 2);
  return message;
}

function arp(op: number, senderMac: string, senderIp: string, targetMac: string, targetIp: string): Uint8Array {
  return concat(u16(1), u16(ETH_IPV4), Uint8Array.of(6, 4), u16(op), mac(senderMac), ip4(senderIp), mac(targetMac), ip4(targetIp));
}

const POD_A = '10.244.0.5';
const SERVICE = '10.96.0.10';
const POD6_A = 'fd00:0010:0244:0000:0000:0000:0000:0005';
const POD6_B = 'fd00:0010:0096:0000:0000:0000:0000:000a';
const LINK_LOCAL_A = 'fe80:0000:0000:0000:0858:0aff:fef4:0005';
const LINK_LOCAL_B = 'fe80:0000:0000:0000:0858:0aff:fef4:000c';
const MSS_OPTION = Uint8Array.of(2, 4, 0x05, 0xb4);
const ROUTER_ALERT_V6 = Uint8Array.of(5, 2, 0, 0);

function frame(name: string, proto: number, bytes: Uint8Array, headerBytes: number, packetBytes = bytes.length): TestFrame {
  return { name, proto, link: 'ethernet', bytes, headerBytes, packetBytes };
}

function rawFrame(name: string, proto: number, bytes: Uint8Array, headerBytes: number): TestFrame {
  return { name, proto, link: 'raw', bytes, headerBytes, packetBytes: bytes.length };
}

function padTo60(bytes: Uint8Array): Uint8Array {
  return concat(bytes, new Uint8Array(Math.max(0, 60 - bytes.length)));
}

const syn: TcpSpec = { srcPort: 34567, dstPort: 80, seq: 0x12345678, ack: 0, flags: 0x02, window: 64240, options: MSS_OPTION };

export const craftedFrames: readonly TestFrame[] = [
  frame(
    'ipv4-tcp-syn',
    ETH_IPV4,
    ethernet(ETH_IPV4, ipv4({ src: POD_A, dst: SERVICE, protocol: 6, dontFragment: true, tos: 0xb9 }, tcp(syn))),
    14 + 20 + 24,
  ),
  frame(
    'ipv4-tcp-all-flags',
    ETH_IPV4,
    ethernet(
      ETH_IPV4,
      ipv4(
        { src: SERVICE, dst: POD_A, protocol: 6, ttl: 1 },
        tcp({ srcPort: 80, dstPort: 34567, seq: 0xfffffffe, ack: 0x80000001, flags: 0xff, window: 0 }, filler(10)),
      ),
    ),
    14 + 20 + 20,
  ),
  frame(
    'ipv4-tcp-ack-payload',
    ETH_IPV4,
    ethernet(
      ETH_IPV4,
      ipv4(
        { src: POD_A, dst: SERVICE, protocol: 6 },
        tcp({ srcPort: 34567, dstPort: 80, seq: 1, ack: 1, flags: 0x18, window: 502 }, filler(40)),
      ),
    ),
    14 + 20 + 20,
  ),
  frame(
    'ipv4-udp-dns',
    ETH_IPV4,
    ethernet(ETH_IPV4, ipv4({ src: POD_A, dst: SERVICE, protocol: 17 }, udp(53000, 53, filler(12)))),
    14 + 20 + 8,
  ),
  frame(
    'ipv4-udp-padded',
    ETH_IPV4,
    padTo60(ethernet(ETH_IPV4, ipv4({ src: POD_A, dst: SERVICE, protocol: 17 }, udp(40000, 7, filler(4))))),
    14 + 20 + 8,
    14 + 20 + 8 + 4,
  ),
  frame(
    'ipv4-sctp',
    ETH_IPV4,
    ethernet(ETH_IPV4, ipv4({ src: POD_A, dst: SERVICE, protocol: 132 }, sctp(3868, 3868, 0xdeadbeef, Uint8Array.of(11, 0, 0, 4)))),
    14 + 20 + 12,
  ),
  frame(
    'ipv4-icmp-echo-reply',
    ETH_IPV4,
    ethernet(ETH_IPV4, ipv4({ src: SERVICE, dst: POD_A, protocol: 1 }, icmp(0, 0, concat(u16(7), u16(9)), filler(16)))),
    14 + 20 + 8,
  ),
  frame(
    'ipv4-icmp-port-unreachable',
    ETH_IPV4,
    ethernet(
      ETH_IPV4,
      ipv4(
        { src: SERVICE, dst: POD_A, protocol: 1, tos: 0xc0 },
        icmp(3, 3, u32(0), ipv4({ src: POD_A, dst: SERVICE, protocol: 17 }, udp(53000, 53, new Uint8Array()))),
      ),
    ),
    14 + 20 + 8,
  ),
  frame(
    'ipv4-options-udp',
    ETH_IPV4,
    ethernet(
      ETH_IPV4,
      ipv4({ src: POD_A, dst: '224.0.0.22', protocol: 17, options: Uint8Array.of(0x94, 4, 0, 0) }, udp(5000, 5001, filler(8))),
    ),
    14 + 24 + 8,
  ),
  frame(
    'ipv4-fragment-first',
    ETH_IPV4,
    ethernet(ETH_IPV4, ipv4({ src: POD_A, dst: SERVICE, protocol: 17, moreFragments: true, id: 0xabcd }, udp(53000, 53, filler(24)))),
    14 + 20 + 8,
  ),
  frame(
    'ipv4-fragment-later',
    ETH_IPV4,
    ethernet(ETH_IPV4, ipv4({ src: POD_A, dst: SERVICE, protocol: 17, fragmentOffset: 1480, id: 0xabcd }, filler(32))),
    14 + 20,
  ),
  frame(
    'ipv4-gre',
    ETH_IPV4,
    ethernet(ETH_IPV4, ipv4({ src: '192.168.1.1', dst: '192.168.1.2', protocol: 47 }, concat(u16(0), u16(0x0800), filler(20)))),
    14 + 20,
  ),
  frame(
    'arp-reply',
    ETH_ARP,
    padTo60(ethernet(ETH_ARP, arp(2, '0a:58:0a:f4:00:01', '10.244.0.1', '0a:58:0a:f4:00:05', POD_A))),
    14 + 28,
    14 + 28,
  ),
  frame(
    'vlan-ipv4-tcp',
    0x8100,
    ethernet(ETH_IPV4, ipv4({ src: POD_A, dst: SERVICE, protocol: 6 }, tcp(syn)), [{ tpid: 0x8100, pcp: 5, dei: false, vid: 100 }]),
    14 + 4 + 20 + 24,
  ),
  frame(
    'qinq-ipv4-udp',
    0x88a8,
    ethernet(ETH_IPV4, ipv4({ src: POD_A, dst: SERVICE, protocol: 17 }, udp(40001, 40002, filler(16))), [
      { tpid: 0x88a8, pcp: 3, dei: true, vid: 200 },
      { tpid: 0x8100, pcp: 0, dei: false, vid: 4094 },
    ]),
    14 + 8 + 20 + 8,
  ),
  frame(
    'ipv6-tcp',
    ETH_IPV6,
    ethernet(
      ETH_IPV6,
      ipv6(
        { src: POD6_A, dst: POD6_B, nextHeader: 6, trafficClass: 0xb8, flowLabel: 0x12345 },
        tcp({ ...syn, flags: 0x12, ack: 0x01020304 }),
      ),
    ),
    14 + 40 + 24,
  ),
  frame(
    'ipv6-hop-by-hop-mld',
    ETH_IPV6,
    ethernet(
      ETH_IPV6,
      ipv6(
        { src: LINK_LOCAL_A, dst: 'ff02:0000:0000:0000:0000:0000:0000:0016', nextHeader: 0, hopLimit: 1 },
        concat(
          optionsHeader(58, ROUTER_ALERT_V6),
          icmp(143, 0, u32(1), concat(Uint8Array.of(4, 0), u16(0), ip6('ff02:0000:0000:0000:0000:0001:ff00:0005'))),
        ),
      ),
    ),
    14 + 40 + 8 + 8,
  ),
  frame(
    'ipv6-routing-udp',
    ETH_IPV6,
    ethernet(
      ETH_IPV6,
      ipv6(
        { src: POD6_A, dst: POD6_B, nextHeader: 43 },
        concat(routingHeader(17, '2001:0db8:0000:0000:0001:0000:0000:0001'), udp(1000, 2000, filler(8))),
      ),
    ),
    14 + 40 + 24 + 8,
  ),
  frame(
    'ipv6-fragment-first-udp',
    ETH_IPV6,
    ethernet(
      ETH_IPV6,
      ipv6({ src: POD6_A, dst: POD6_B, nextHeader: 44 }, concat(fragmentHeader(17, 0, true, 0xcafe0001), udp(53000, 53, filler(32)))),
    ),
    14 + 40 + 8 + 8,
  ),
  frame(
    'ipv6-fragment-later',
    ETH_IPV6,
    ethernet(ETH_IPV6, ipv6({ src: POD6_A, dst: POD6_B, nextHeader: 44 }, concat(fragmentHeader(17, 1448, false, 0xcafe0001), filler(24)))),
    14 + 40 + 8,
  ),
  frame(
    'ipv6-destination-options-tcp',
    ETH_IPV6,
    ethernet(
      ETH_IPV6,
      ipv6(
        { src: POD6_A, dst: POD6_B, nextHeader: 60 },
        concat(optionsHeader(6, new Uint8Array()), tcp({ srcPort: 443, dstPort: 50000, seq: 5, ack: 6, flags: 0x11, window: 1000 })),
      ),
    ),
    14 + 40 + 8 + 20,
  ),
  frame(
    'ipv6-ah-tcp',
    ETH_IPV6,
    ethernet(
      ETH_IPV6,
      ipv6(
        { src: POD6_A, dst: POD6_B, nextHeader: 51 },
        concat(authenticationHeader(6), tcp({ srcPort: 22, dstPort: 60000, seq: 9, ack: 10, flags: 0x04, window: 0 })),
      ),
    ),
    14 + 40 + 24 + 20,
  ),
  frame(
    'ipv6-extension-chain-udp',
    ETH_IPV6,
    ethernet(
      ETH_IPV6,
      ipv6(
        { src: '2001:0db8:0000:0000:0001:0000:0000:0001', dst: '2001:0db8:0000:0001:0001:0001:0001:0001', nextHeader: 0 },
        concat(
          optionsHeader(60, ROUTER_ALERT_V6),
          optionsHeader(43, Uint8Array.of(1, 8, 0, 0, 0, 0, 0, 0, 0, 0)),
          routingHeader(17, POD6_B),
          udp(7000, 7001, filler(4)),
        ),
      ),
    ),
    14 + 40 + 8 + 16 + 24 + 8,
  ),
  frame(
    'ipv6-neighbor-solicitation',
    ETH_IPV6,
    ethernet(
      ETH_IPV6,
      ipv6(
        { src: LINK_LOCAL_A, dst: 'ff02:0000:0000:0000:0000:0001:fff4:000c', nextHeader: 58, hopLimit: 255 },
        icmp(135, 0, u32(0), concat(ip6(LINK_LOCAL_B), Uint8Array.of(1, 1), mac('0a:58:0a:f4:00:05'))),
      ),
    ),
    14 + 40 + 24,
  ),
  frame(
    'ipv6-neighbor-advertisement',
    ETH_IPV6,
    ethernet(
      ETH_IPV6,
      ipv6({ src: LINK_LOCAL_B, dst: LINK_LOCAL_A, nextHeader: 58, hopLimit: 255 }, icmp(136, 0, u32(0x60000000), ip6(LINK_LOCAL_B))),
    ),
    14 + 40 + 24,
  ),
  frame(
    'ipv6-redirect',
    ETH_IPV6,
    ethernet(
      ETH_IPV6,
      ipv6(
        { src: LINK_LOCAL_B, dst: LINK_LOCAL_A, nextHeader: 58, hopLimit: 255 },
        icmp(137, 0, u32(0), concat(ip6(LINK_LOCAL_B), ip6(POD6_B))),
      ),
    ),
    14 + 40 + 24,
  ),
  frame(
    'ipv6-echo-request',
    ETH_IPV6,
    ethernet(
      ETH_IPV6,
      ipv6(
        { src: POD6_A, dst: '0000:0000:0000:0000:0000:ffff:0a60:000a', nextHeader: 58 },
        icmp(128, 0, concat(u16(0x1234), u16(1)), filler(56)),
      ),
    ),
    14 + 40 + 8,
  ),
  frame('lldp', 0x88cc, padTo60(ethernet(0x88cc, concat(Uint8Array.of(2, 7, 4), mac('0a:58:0a:f4:00:05'), Uint8Array.of(0, 0)))), 14, 14),
  rawFrame('raw-ipv4-tcp', ETH_IPV4, ipv4({ src: POD_A, dst: SERVICE, protocol: 6 }, tcp(syn)), 20 + 24),
  rawFrame('raw-ipv6-udp', ETH_IPV6, ipv6({ src: POD6_A, dst: POD6_B, nextHeader: 17 }, udp(51820, 51820, filler(32))), 40 + 8),
  // Source 8.0.1.2 puts 0x0800, the IPv4 ethertype, where an Ethernet header has its ethertype.
  rawFrame(
    'raw-ipv4-ethertype-lookalike',
    ETH_IPV4,
    ipv4({ src: '8.0.1.2', dst: SERVICE, protocol: 17 }, udp(1234, 53, filler(8))),
    20 + 8,
  ),
  // Source 129.0.1.2 puts 0x8100, the 802.1Q TPID, there.
  rawFrame('raw-ipv4-vlan-lookalike', ETH_IPV4, ipv4({ src: '129.0.1.2', dst: SERVICE, protocol: 6 }, tcp(syn)), 20 + 24),
];

const PSAMPLE_ATTR_DATA = 6;
const PSAMPLE_ATTR_PROTO = 14;
const NLMSG_AND_GENL_HEADER_BYTES = 20;

function psampleFixtureDir(): string {
  return join(__dirname, '..', 'fixtures', 'psample');
}

/** DATA and PROTO of one captured psample message (a whole netlink message in hex). */
function psampleFrame(name: string): Omit<TestFrame, 'headerBytes' | 'packetBytes'> {
  const message = Buffer.from(readFileSync(join(psampleFixtureDir(), `${name}.hex`), 'utf8').trim(), 'hex');
  let data: Uint8Array | undefined;
  let proto: number | undefined;
  for (let offset = NLMSG_AND_GENL_HEADER_BYTES; offset + 4 <= message.length;) {
    const length = message.readUInt16LE(offset);
    const type = message.readUInt16LE(offset + 2) & 0x3fff;
    if (length < 4) throw new Error(`${name}.hex: attribute length ${length} at ${offset}`);
    if (type === PSAMPLE_ATTR_DATA) data = Uint8Array.from(message.subarray(offset + 4, offset + length));
    if (type === PSAMPLE_ATTR_PROTO) proto = message.readUInt16LE(offset + 4);
    offset += (length + 3) & ~3;
  }
  if (data === undefined || proto === undefined) throw new Error(`${name}.hex has no DATA or PROTO attribute`);
  return { name, proto, link: 'ethernet', bytes: data };
}

export function capturedFrames(): TestFrame[] {
  const names = readdirSync(psampleFixtureDir())
    .filter((file) => file.endsWith('.hex'))
    .map((file) => file.slice(0, -4))
    .sort();
  return names.map((name) => {
    const frame = psampleFrame(name);
    // Each capture holds a whole ARP frame or a whole ICMP echo (Ethernet + IPv4 + 8-byte ICMP header).
    const headerBytes = frame.proto === ETH_ARP ? 14 + 28 : 14 + 20 + 8;
    return { ...frame, headerBytes, packetBytes: frame.bytes.length };
  });
}
