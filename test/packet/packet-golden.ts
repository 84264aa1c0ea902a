// The inputs of the packet JSON golden corpus (test/fixtures/packet-json/golden.tsv.gz): every
// test frame, hand-made packets for each branch of the decoder no test frame takes, every cut of
// each, and seeded random mutations of them. Deterministic: the same list on every run.
import { concat, craftedFrames, capturedFrames, ethernet, icmp, ipv4, ipv6, sctp, tcp, u16, udp } from './packet-frames.js';

export interface GoldenInput {
  /** Where the input comes from: a frame's name, `NAME/cut:N`, `NAME/proto:P`, `mutation:I`, `random:I`. */
  name: string;
  proto: number;
  bytes: Uint8Array;
}

const ETH_IPV4 = 0x0800;
const ETH_ARP = 0x0806;
const ETH_IPV6 = 0x86dd;
const A = '10.244.0.5';
const B = '10.96.0.10';
const A6 = 'fd00:0010:0244:0000:0000:0000:0000:0005';
const B6 = 'fd00:0010:0096:0000:0000:0000:0000:000a';

function hex(text: string): Uint8Array {
  return Uint8Array.from(Buffer.from(text.replace(/\s+/g, ''), 'hex'));
}

/** `bytes` with `value` written at `offset` (one byte, or two big-endian when value > 0xff or `wide`). */
function patched(bytes: Uint8Array, offset: number, value: number, wide = value > 0xff): Uint8Array {
  const copy = Uint8Array.from(bytes);
  if (wide) copy.set(u16(value), offset);
  else copy[offset] = value;
  return copy;
}

function arpBody(hardwareType: number, protocolType: number, hlen: number, plen: number, op: number): Uint8Array {
  return concat(
    u16(hardwareType),
    u16(protocolType),
    Uint8Array.of(hlen, plen),
    u16(op),
    hex('0a580af400010af40001 0a580af40005 0af40005'),
  );
}

const v4 = (protocol: number, payload: Uint8Array, extra: Partial<Parameters<typeof ipv4>[0]> = {}): Uint8Array =>
  ethernet(ETH_IPV4, ipv4({ src: A, dst: B, protocol, ...extra }, payload));
const v6 = (nextHeader: number, payload: Uint8Array): Uint8Array => ethernet(ETH_IPV6, ipv6({ src: A6, dst: B6, nextHeader }, payload));
const ext = (nextHeader: number, lengthField: number, bytes: number): Uint8Array =>
  concat(Uint8Array.of(nextHeader, lengthField), new Uint8Array(bytes - 2));
const syn = tcp({ srcPort: 40000, dstPort: 443, seq: 1, ack: 0, flags: 0x02, window: 1024 });

/** Packets for the branches the test frames do not take: odd ARP, contradicting lengths, every ICMP name, odd protos. */
function handMade(): GoldenInput[] {
  const made: Array<[string, number, Uint8Array]> = [
    ['empty', ETH_IPV4, new Uint8Array()],
    ['empty-proto-0', 0, new Uint8Array()],
    ['one-byte-ipv4', ETH_IPV4, Uint8Array.of(0x45)],
    ['one-byte-ipv6', ETH_IPV6, Uint8Array.of(0x60)],
    ['arp-request', ETH_ARP, ethernet(ETH_ARP, arpBody(1, ETH_IPV4, 6, 4, 1))],
    ['arp-other-op', ETH_ARP, ethernet(ETH_ARP, arpBody(1, ETH_IPV4, 6, 4, 9))],
    ['arp-infiniband', ETH_ARP, ethernet(ETH_ARP, arpBody(32, ETH_IPV4, 20, 4, 1))],
    ['arp-ipv6-protocol', ETH_ARP, ethernet(ETH_ARP, arpBody(1, ETH_IPV6, 6, 4, 1))],
    ['arp-hlen-8', ETH_ARP, ethernet(ETH_ARP, arpBody(1, ETH_IPV4, 8, 4, 1))],
    ['arp-plen-16', ETH_ARP, ethernet(ETH_ARP, arpBody(1, ETH_IPV4, 6, 16, 1))],
    [
      'vlan-9100',
      0x9100,
      ethernet(ETH_IPV4, ipv4({ src: A, dst: B, protocol: 17 }, udp(1, 2, new Uint8Array())), [
        { tpid: 0x9100, pcp: 7, dei: true, vid: 0 },
      ]),
    ],
    [
      'vlan-three-tags-arp',
      0x88a8,
      ethernet(ETH_ARP, arpBody(1, ETH_IPV4, 6, 4, 2), [
        { tpid: 0x88a8, pcp: 1, dei: false, vid: 1 },
        { tpid: 0x9100, pcp: 2, dei: true, vid: 2 },
        { tpid: 0x8100, pcp: 3, dei: false, vid: 4095 },
      ]),
    ],
    ['vlan-unknown-ethertype', 0x8100, ethernet(0x88cc, hex('0207040a580af400050000'), [{ tpid: 0x8100, pcp: 0, dei: false, vid: 10 }])],
    ['ethernet-proto-mismatch', 0x88cc, v4(6, syn)],
    ['ipv4-version-6', ETH_IPV4, patched(v4(6, syn), 14, 0x65)],
    ['ipv4-version-0', ETH_IPV4, patched(v4(6, syn), 14, 0x05)],
    ['ipv4-ihl-0', ETH_IPV4, patched(v4(6, syn), 14, 0x40)],
    ['ipv4-ihl-15-short', ETH_IPV4, patched(v4(6, syn), 14, 0x4f)],
    [
      'ipv4-total-length-in-header',
      ETH_IPV4,
      patched(v4(17, udp(1, 2, new Uint8Array()), { options: Uint8Array.of(1, 1, 1, 0) }), 16, 22, true),
    ],
    ['ipv4-total-length-0', ETH_IPV4, patched(v4(6, syn), 16, 0, true)],
    ['ipv4-total-length-past-data', ETH_IPV4, patched(v4(6, syn), 16, 1500, true)],
    ['ipv4-total-length-in-udp', ETH_IPV4, patched(v4(17, udp(1, 2, new Uint8Array(8))), 16, 24, true)],
    ['ipv4-total-length-in-icmp', ETH_IPV4, patched(v4(1, icmp(8, 0, concat(u16(1), u16(2)))), 16, 24, true)],
    ['ipv4-total-length-icmp-type-only', ETH_IPV4, patched(v4(1, icmp(8, 0, concat(u16(1), u16(2)))), 16, 21, true)],
    ['ipv4-total-length-in-sctp', ETH_IPV4, patched(v4(132, sctp(1, 2, 3, new Uint8Array(4))), 16, 30, true)],
    ['ipv4-fragment-df-mf', ETH_IPV4, v4(6, syn, { dontFragment: true, moreFragments: true, fragmentOffset: 65528 })],
    ['ipv4-protocol-none', ETH_IPV4, v4(59, new Uint8Array(8))],
    ['ipv4-protocol-255', ETH_IPV4, v4(255, new Uint8Array(8))],
    ['ipv4-ecn-dscp-all', ETH_IPV4, v4(6, syn, { tos: 0xff, ttl: 255, id: 0xffff })],
    ['ipv4-tcp-data-offset-0', ETH_IPV4, patched(v4(6, syn), 14 + 20 + 12, 0x00)],
    ['ipv4-tcp-data-offset-15', ETH_IPV4, patched(v4(6, syn), 14 + 20 + 12, 0xf0)],
    ['ipv4-tcp-data-offset-15-declared', ETH_IPV4, patched(v4(6, concat(syn, new Uint8Array(60))), 14 + 20 + 12, 0xf0)],
    ['ipv4-tcp-no-flags', ETH_IPV4, patched(v4(6, syn), 14 + 20 + 13, 0x00)],
    ['ipv4-tcp-ece-cwr', ETH_IPV4, patched(v4(6, syn), 14 + 20 + 13, 0xc0)],
    ['ipv4-sctp-in-fragment', ETH_IPV4, v4(132, new Uint8Array(12), { fragmentOffset: 8 })],
    ['ipv6-version-4', ETH_IPV6, patched(v6(17, udp(1, 2, new Uint8Array())), 14, 0x40)],
    ['ipv6-payload-length-0', ETH_IPV6, patched(v6(6, syn), 18, 0, true)],
    ['ipv6-payload-length-past-data', ETH_IPV6, patched(v6(6, syn), 18, 9000, true)],
    ['ipv6-payload-length-in-tcp', ETH_IPV6, patched(v6(6, syn), 18, 10, true)],
    ['ipv6-payload-length-in-extension', ETH_IPV6, patched(v6(0, concat(ext(17, 1, 16), udp(1, 2, new Uint8Array()))), 18, 12, true)],
    ['ipv6-payload-length-in-extension-minimum', ETH_IPV6, patched(v6(0, concat(ext(17, 0, 8), udp(1, 2, new Uint8Array()))), 18, 4, true)],
    ['ipv6-extension-long-cut', ETH_IPV6, v6(60, concat(Uint8Array.of(17, 255), new Uint8Array(20)))],
    ['ipv6-ah-cut', ETH_IPV6, v6(51, concat(Uint8Array.of(6, 255), new Uint8Array(30)))],
    ['ipv6-protocol-none', ETH_IPV6, v6(59, new Uint8Array(8))],
    ['ipv6-extension-then-none', ETH_IPV6, v6(0, concat(ext(59, 0, 8), new Uint8Array(4)))],
    ['ipv6-extension-then-unknown', ETH_IPV6, v6(60, concat(ext(47, 0, 8), new Uint8Array(4)))],
    [
      'ipv6-fragment-then-routing',
      ETH_IPV6,
      v6(44, concat(Uint8Array.of(43, 0), u16(0), hex('00000001'), ext(17, 0, 8), udp(1, 2, new Uint8Array()))),
    ],
    ['ipv6-later-fragment-before-routing', ETH_IPV6, v6(44, concat(Uint8Array.of(43, 0), u16(8 | 1), hex('ffffffff'), ext(17, 0, 8)))],
    [
      'ipv6-two-fragments',
      ETH_IPV6,
      v6(
        44,
        concat(Uint8Array.of(44, 0), u16(1), hex('00000001'), Uint8Array.of(17, 0), u16(0), hex('00000002'), udp(1, 2, new Uint8Array())),
      ),
    ],
    ['ipv6-flow-label-max', ETH_IPV6, patched(patched(v6(17, udp(1, 2, new Uint8Array())), 14, 0x6f), 15, 0xff)],
    ['raw-ipv4-short', ETH_IPV4, ipv4({ src: A, dst: B, protocol: 6 }, new Uint8Array()).subarray(0, 10)],
    ['raw-ipv6-short', ETH_IPV6, Uint8Array.of(0x60, 0, 0, 0, 0, 8, 17, 64, 0, 0, 0, 0, 0)],
    ['raw-ipv4-vlan-tpid-then-proto', ETH_IPV4, ipv4({ src: '129.0.1.2', dst: '8.0.69.0', protocol: 17 }, udp(1, 2, new Uint8Array()))],
    ['raw-ipv4-vlan-tpid-to-end', ETH_IPV4, ipv4({ src: '129.0.1.2', dst: B, protocol: 17 }, new Uint8Array()).subarray(0, 16)],
    ['raw-ipv4-ethertype-to-end', ETH_IPV4, ipv4({ src: '8.0.1.2', dst: B, protocol: 17 }, new Uint8Array()).subarray(0, 14)],
    ['raw-ipv4-ethertype-then-v4', ETH_IPV4, ipv4({ src: '8.0.1.2', dst: '69.0.0.1', protocol: 17 }, udp(1, 2, new Uint8Array()))],
    [
      'raw-ipv6-looks-ethernet',
      ETH_IPV6,
      ipv6({ src: '0000:0000:86dd:6000:0000:0000:0000:0001', dst: B6, nextHeader: 17 }, udp(1, 2, new Uint8Array())),
    ],
    ['raw-ipv4-proto-ipv6', ETH_IPV6, ipv4({ src: A, dst: B, protocol: 6 }, syn)],
  ];
  for (const [type, code] of [
    [0, 0],
    [3, 1],
    [4, 0],
    [5, 1],
    [8, 0],
    [9, 0],
    [10, 0],
    [11, 1],
    [12, 0],
    [13, 0],
    [14, 0],
    [15, 0],
    [42, 7],
  ] as const) {
    made.push([`icmp-type-${type}`, ETH_IPV4, v4(1, icmp(type, code, concat(u16(0xbeef), u16(0xffff))))]);
  }
  for (const type of [1, 2, 3, 4, 5, 127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 143, 255]) {
    made.push([
      `icmpv6-type-${type}`,
      ETH_IPV6,
      v6(58, icmp(type, 3, concat(u16(0xbeef), u16(7)), hex('20010db8000000000000000000000001'))),
    ]);
  }
  made.push([
    'icmpv6-ns-target-declared-short',
    ETH_IPV6,
    patched(v6(58, icmp(135, 0, new Uint8Array(4), new Uint8Array(16))), 18, 12, true),
  ]);
  made.push(['icmpv6-in-ipv4', ETH_IPV4, v4(58, icmp(135, 0, new Uint8Array(4), new Uint8Array(16)))]);
  made.push(['icmp-in-ipv6', ETH_IPV6, v6(1, icmp(8, 0, concat(u16(1), u16(2))))]);
  return made.map(([name, proto, bytes]) => ({ name, proto, bytes }));
}

/** xorshift32: the same sequence on every run, no dependency. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return state >>> 0;
  };
}

const PROTOS = [ETH_IPV4, ETH_IPV6, ETH_ARP, 0x8100, 0x88a8, 0x9100, 0x88cc, 0, 0xffff];
const GOLDEN_MUTATIONS = 4000;
const GOLDEN_RANDOM = 500;

export function goldenInputs(): GoldenInput[] {
  const bases: GoldenInput[] = [
    ...capturedFrames().map(({ name, proto, bytes }) => ({ name, proto, bytes })),
    ...craftedFrames.map(({ name, proto, bytes }) => ({ name, proto, bytes })),
    ...handMade(),
  ];
  const inputs: GoldenInput[] = [...bases];
  for (const base of bases) {
    for (let cut = 0; cut < base.bytes.length; cut++)
      inputs.push({ name: `${base.name}/cut:${cut}`, proto: base.proto, bytes: base.bytes.slice(0, cut) });
    for (const proto of PROTOS) {
      if (proto !== base.proto) inputs.push({ name: `${base.name}/proto:${proto}`, proto, bytes: base.bytes });
    }
  }
  const next = random(0x5eed1234);
  for (let i = 0; i < GOLDEN_MUTATIONS; i++) {
    const base = bases[next() % bases.length]!;
    const bytes = Uint8Array.from(base.bytes.subarray(0, next() % 4 === 0 ? next() % (base.bytes.length + 1) : base.bytes.length));
    // Header bytes first: a flip there changes what the decoder does, one in a payload seldom does.
    for (let flip = next() % 4; flip >= 0 && bytes.length > 0; flip--) {
      const at = next() % Math.min(bytes.length, next() % 2 === 0 ? 80 : bytes.length);
      bytes[at] = next() % 3 === 0 ? bytes[at]! ^ (1 << (next() % 8)) : next() & 0xff;
    }
    const proto = next() % 4 === 0 ? PROTOS[next() % PROTOS.length]! : base.proto;
    inputs.push({ name: `mutation:${i}`, proto, bytes });
  }
  for (let i = 0; i < GOLDEN_RANDOM; i++) {
    const bytes = Uint8Array.from({ length: next() % 128 }, () => next() & 0xff);
    inputs.push({ name: `random:${i}`, proto: next() % 2 === 0 ? PROTOS[next() % PROTOS.length]! : next() & 0xffff, bytes });
  }
  return inputs;
}
