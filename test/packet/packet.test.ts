import { describe, expect, test } from 'vitest';
import { decodePacket, describePacket } from '../../src/packet/index.js';
import type { DecodedPacket } from '../../src/packet/index.js';
import { encodePsample } from '../../src/psample/encode';
import { PsampleBatch } from '../../src/psample/batch';
import { statValues } from '../../src/psample/stats';
import { addon, NATIVE_LITTLE_ENDIAN } from '../../src/native/binding';
import { capturedFrames, craftedFrames, viewInLargerBuffer, type TestFrame } from './packet-frames.js';

const NO_TUNNEL_FLAGS = { dontFragment: false, csum: false, oam: false, ipv4InfoBridge: false } as const;

const allFrames: readonly TestFrame[] = [...capturedFrames(), ...craftedFrames];

function frameNamed(name: string): TestFrame {
  const frame = allFrames.find((candidate) => candidate.name === name);
  if (frame === undefined) throw new Error(`no test frame named ${name}`);
  return frame;
}

function decodeFrame(name: string): DecodedPacket {
  const frame = frameNamed(name);
  return decodePacket(frame.bytes, frame.proto);
}

function describeFrame(name: string): string {
  const frame = frameNamed(name);
  return describePacket(frame.bytes, frame.proto);
}

describe('real psample captures', () => {
  test('the four captures are present', () => {
    expect(capturedFrames().map((frame) => frame.name)).toEqual(expect.arrayContaining(['ovs-1', 'ovs-2', 'tc-cookie-1', 'tc-nocookie-1']));
  });

  test('OVS ARP request', () => {
    const packet = decodeFrame('ovs-1');
    expect(packet).toMatchObject({ link: 'ethernet', etherType: 0x0806, truncated: false, length: 42 });
    expect(packet.ethernet).toEqual({ dst: 'ff:ff:ff:ff:ff:ff', src: 'd6:2e:62:b1:d7:39', vlans: [] });
    expect(packet.network).toEqual({
      kind: 'arp',
      hardwareType: 1,
      protocolType: 0x0800,
      op: 1,
      senderMac: 'd6:2e:62:b1:d7:39',
      senderIp: '10.0.0.1',
      targetMac: '00:00:00:00:00:00',
      targetIp: '10.0.0.2',
    });
    expect(describeFrame('ovs-1')).toBe('ARP who-has 10.0.0.2 tell 10.0.0.1');
  });

  test('tc ARP request', () => {
    expect(describeFrame('tc-nocookie-1')).toBe('ARP who-has 10.0.0.1 tell 10.0.0.2');
  });

  test('OVS ICMP echo request', () => {
    const packet = decodeFrame('ovs-2');
    expect(packet.ethernet).toEqual({ dst: 'be:76:16:64:8d:9d', src: 'd6:2e:62:b1:d7:39', vlans: [] });
    expect(packet.network).toMatchObject({
      kind: 'ipv4',
      ihl: 5,
      totalLength: 84,
      dontFragment: true,
      moreFragments: false,
      fragmentOffset: 0,
      ttl: 64,
      protocol: 1,
      src: '10.0.0.1',
      dst: '10.0.0.2',
    });
    expect(packet.transport).toEqual({ kind: 'icmp', type: 8, code: 0, name: 'echo-request', id: 381, seq: 1 });
    expect(packet.truncated).toBe(false);
    expect(describeFrame('ovs-2')).toBe('10.0.0.1 > 10.0.0.2 ICMP echo-request id=381 seq=1 len=98');
  });

  test('tc ICMP echo request', () => {
    expect(describeFrame('tc-cookie-1')).toBe('10.0.0.2 > 10.0.0.1 ICMP echo-request id=294 seq=1 len=98');
  });
});

describe('crafted frames', () => {
  test('TCP SYN with options, DSCP and DF', () => {
    const packet = decodeFrame('ipv4-tcp-syn');
    expect(packet.network).toMatchObject({ kind: 'ipv4', dscp: 46, ecn: 1, dontFragment: true, id: 0x1c46 });
    expect(packet.transport).toEqual({
      kind: 'tcp',
      srcPort: 34567,
      dstPort: 80,
      seq: 0x12345678,
      ack: 0,
      dataOffset: 6,
      flags: ['SYN'],
      window: 64240,
    });
    expect(describeFrame('ipv4-tcp-syn')).toBe('10.244.0.5:34567 > 10.96.0.10:80 TCP [SYN] len=58');
  });

  test('every TCP flag, unsigned 32-bit sequence numbers', () => {
    expect(decodeFrame('ipv4-tcp-all-flags').transport).toMatchObject({
      seq: 0xfffffffe,
      ack: 0x80000001,
      flags: ['FIN', 'SYN', 'RST', 'PSH', 'ACK', 'URG', 'ECE', 'CWR'],
    });
  });

  test('UDP, SCTP and ICMP error', () => {
    expect(decodeFrame('ipv4-udp-dns').transport).toEqual({ kind: 'udp', srcPort: 53000, dstPort: 53, length: 20 });
    expect(decodeFrame('ipv4-sctp').transport).toEqual({ kind: 'sctp', srcPort: 3868, dstPort: 3868, verificationTag: 0xdeadbeef });
    expect(describeFrame('ipv4-sctp')).toBe('10.244.0.5:3868 > 10.96.0.10:3868 SCTP vtag=0xdeadbeef len=50');
    const unreachable = decodeFrame('ipv4-icmp-port-unreachable');
    expect(unreachable.transport).toEqual({ kind: 'icmp', type: 3, code: 3, name: 'destination-unreachable' });
    expect(describeFrame('ipv4-icmp-port-unreachable')).toBe('10.96.0.10 > 10.244.0.5 ICMP destination-unreachable code=3 len=70');
  });

  test('Ethernet padding after a short IP packet is not mistaken for truncation or payload', () => {
    const packet = decodeFrame('ipv4-udp-padded');
    expect(packet.truncated).toBe(false);
    expect(packet.transport).toMatchObject({ kind: 'udp', srcPort: 40000, dstPort: 7 });
  });

  test('IPv4 options are skipped', () => {
    const packet = decodeFrame('ipv4-options-udp');
    expect(packet.network).toMatchObject({ ihl: 6, dst: '224.0.0.22' });
    expect(packet.transport).toMatchObject({ kind: 'udp', srcPort: 5000, dstPort: 5001 });
  });

  test('IPv4 fragments: the first has a transport header, later ones do not', () => {
    const first = decodeFrame('ipv4-fragment-first');
    expect(first.network).toMatchObject({ moreFragments: true, fragmentOffset: 0, id: 0xabcd });
    expect(first.transport).toMatchObject({ kind: 'udp', srcPort: 53000 });
    const later = decodeFrame('ipv4-fragment-later');
    expect(later.network).toMatchObject({ moreFragments: false, fragmentOffset: 1480, protocol: 17 });
    expect(later.transport).toBeUndefined();
    expect(later.unknown).toBeUndefined();
    expect(describeFrame('ipv4-fragment-later')).toBe('10.244.0.5 > 10.96.0.10 UDP fragment offset=1480 len=66');
  });

  test('ARP reply', () => {
    expect(describeFrame('arp-reply')).toBe('ARP 10.244.0.1 is-at 0a:58:0a:f4:00:01');
  });

  test('802.1Q and 802.1ad QinQ tags, outermost first', () => {
    const single = decodeFrame('vlan-ipv4-tcp');
    expect(single.ethernet?.vlans).toEqual([{ tpid: 0x8100, pcp: 5, dei: false, vid: 100 }]);
    expect(single.etherType).toBe(0x0800);
    expect(describeFrame('vlan-ipv4-tcp')).toBe('vlan 100 10.244.0.5:34567 > 10.96.0.10:80 TCP [SYN] len=62');
    const qinq = decodeFrame('qinq-ipv4-udp');
    expect(qinq.ethernet?.vlans).toEqual([
      { tpid: 0x88a8, pcp: 3, dei: true, vid: 200 },
      { tpid: 0x8100, pcp: 0, dei: false, vid: 4094 },
    ]);
    expect(qinq.transport).toMatchObject({ kind: 'udp', srcPort: 40001 });
  });

  test('a VLAN tag offloaded out of the data leaves a plain frame with the inner proto', () => {
    const tagged = frameNamed('vlan-ipv4-tcp').bytes;
    const untagged = new Uint8Array(tagged.length - 4);
    untagged.set(tagged.subarray(0, 12), 0);
    untagged.set(tagged.subarray(16), 12);
    const packet = decodePacket(untagged, 0x0800);
    expect(packet).toMatchObject({ link: 'ethernet', etherType: 0x0800, truncated: false });
    expect(packet.ethernet?.vlans).toEqual([]);
    expect(packet.transport).toMatchObject({ kind: 'tcp', dstPort: 80 });
  });

  test('IPv6 header fields', () => {
    expect(decodeFrame('ipv6-tcp').network).toMatchObject({
      kind: 'ipv6',
      dscp: 46,
      ecn: 0,
      flowLabel: 0x12345,
      payloadLength: 24,
      nextHeader: 6,
      hopLimit: 64,
      src: 'fd00:10:244::5',
      dst: 'fd00:10:96::a',
      extensions: [],
      protocol: 6,
    });
    expect(describeFrame('ipv6-tcp')).toBe('[fd00:10:244::5]:34567 > [fd00:10:96::a]:80 TCP [SYN,ACK] len=78');
  });

  test.each([
    ['ipv6-hop-by-hop-mld', [['hop-by-hop', 0, 8]], 58, 'icmpv6'],
    ['ipv6-routing-udp', [['routing', 43, 24]], 17, 'udp'],
    ['ipv6-fragment-first-udp', [['fragment', 44, 8]], 17, 'udp'],
    ['ipv6-destination-options-tcp', [['destination-options', 60, 8]], 6, 'tcp'],
    ['ipv6-ah-tcp', [['authentication', 51, 24]], 6, 'tcp'],
    [
      'ipv6-extension-chain-udp',
      [
        ['hop-by-hop', 0, 8],
        ['destination-options', 60, 16],
        ['routing', 43, 24],
      ],
      17,
      'udp',
    ],
  ] as const)('IPv6 extension headers: %s', (name, extensions, protocol, transportKind) => {
    const packet = decodeFrame(name);
    const ipv6 = packet.network?.kind === 'ipv6' ? packet.network : undefined;
    expect(ipv6?.extensions).toEqual(extensions.map(([extension, number, length]) => ({ name: extension, protocol: number, length })));
    expect(ipv6?.protocol).toBe(protocol);
    expect(packet.transport?.kind).toBe(transportKind);
    expect(packet.truncated).toBe(false);
  });

  test('IPv6 fragments', () => {
    const first = decodeFrame('ipv6-fragment-first-udp');
    expect(first.network).toMatchObject({ fragment: { offset: 0, moreFragments: true, id: 0xcafe0001 } });
    const later = decodeFrame('ipv6-fragment-later');
    expect(later.network).toMatchObject({ protocol: 17, fragment: { offset: 1448, moreFragments: false, id: 0xcafe0001 } });
    expect(later.transport).toBeUndefined();
    expect(describeFrame('ipv6-fragment-later')).toBe('fd00:10:244::5 > fd00:10:96::a UDP fragment offset=1448 len=86');
  });

  test('ICMPv6 neighbor discovery and echo', () => {
    expect(decodeFrame('ipv6-neighbor-solicitation').transport).toEqual({
      kind: 'icmpv6',
      type: 135,
      code: 0,
      name: 'neighbor-solicitation',
      target: 'fe80::858:aff:fef4:c',
    });
    expect(decodeFrame('ipv6-neighbor-advertisement').transport).toMatchObject({
      name: 'neighbor-advertisement',
      target: 'fe80::858:aff:fef4:c',
    });
    expect(decodeFrame('ipv6-redirect').transport).toMatchObject({ name: 'redirect', target: 'fe80::858:aff:fef4:c' });
    expect(describeFrame('ipv6-echo-request')).toBe('fd00:10:244::5 > ::ffff:10.96.0.10 ICMPv6 echo-request id=4660 seq=1 len=118');
  });

  test('unknown ethertype and IP protocol are reported, not dropped', () => {
    const lldp = decodeFrame('lldp');
    expect(lldp.unknown).toEqual({ kind: 'ethertype', value: 0x88cc });
    expect(describeFrame('lldp')).toBe('0a:58:0a:f4:00:05 > 0a:58:0a:f4:00:0c ethertype 0x88cc len=60');
    const gre = decodeFrame('ipv4-gre');
    expect(gre.unknown).toEqual({ kind: 'ip-protocol', value: 47 });
    expect(describeFrame('ipv4-gre')).toBe('192.168.1.1 > 192.168.1.2 proto 47 len=58');
  });
});

describe('link detection', () => {
  test.each(allFrames.map((frame) => [frame.name, frame] as const))('%s', (_name, frame) => {
    expect(decodePacket(frame.bytes, frame.proto).link).toBe(frame.link);
  });

  test('raw IP packets decode from the IP header', () => {
    expect(decodeFrame('raw-ipv4-tcp')).toMatchObject({ link: 'raw', etherType: 0x0800 });
    expect(decodeFrame('raw-ipv4-tcp').ethernet).toBeUndefined();
    expect(describeFrame('raw-ipv6-udp')).toBe('[fd00:10:244::5]:51820 > [fd00:10:96::a]:51820 UDP len=80');
    expect(describeFrame('raw-ipv4-ethertype-lookalike')).toBe('8.0.1.2:1234 > 10.96.0.10:53 UDP len=36');
  });
});

describe('IPv6 text form (RFC 5952)', () => {
  test.each([
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['2001:0db8:0000:0001:0001:0001:0001:0001', '2001:db8:0:1:1:1:1:1'],
    ['2001:0db8:0000:0000:0001:0000:0000:0001', '2001:db8::1:0:0:1'],
    ['2001:0000:0000:0001:0000:0000:0000:0001', '2001:0:0:1::1'],
    ['0000:0000:0000:0000:0000:0000:0000:0000', '::'],
    ['0000:0000:0000:0000:0000:0000:0000:0001', '::1'],
    ['fe80:0000:0000:0000:0000:0000:0000:0000', 'fe80::'],
    ['2001:0DB8:ABCD:0012:0000:0000:0000:0000', '2001:db8:abcd:12::'],
    ['0000:0000:0000:0000:0000:ffff:c000:0201', '::ffff:192.0.2.1'],
    ['0000:0000:0000:0000:0001:ffff:c000:0201', '::1:ffff:c000:201'],
    ['ff02:0000:0000:0000:0000:0001:ff00:0002', 'ff02::1:ff00:2'],
  ])('%s -> %s', (full, expected) => {
    const bytes = Buffer.from(full.replaceAll(':', ''), 'hex');
    // The tunnel metadata's form and the packet's are one, native (native/packet/address_text.h).
    const [buffer, count] = addon.decode(encodePsample({ tunnel: { ipv6Src: full, ...NO_TUNNEL_FLAGS } }), 0, statValues());
    expect(new PsampleBatch(buffer, count, NATIVE_LITTLE_ENDIAN).at(0)!.tunnel?.ipv6Src).toBe(expected);
    const header = Uint8Array.of(0x60, 0, 0, 0, 0, 0, 59, 64);
    const packet = decodePacket(Buffer.concat([header, bytes, bytes]), 0x86dd);
    expect(packet.network).toMatchObject({ kind: 'ipv6', src: expected, dst: expected });
  });
});

describe('GSO packets sampled before segmentation', () => {
  test('IP length 0 (BIG TCP) leaves the data to bound the packet', () => {
    for (const [name, lengthOffset] of [
      ['ipv4-tcp-ack-payload', 14 + 2],
      ['ipv6-tcp', 14 + 4],
    ] as const) {
      const bytes = Uint8Array.from(frameNamed(name).bytes);
      bytes.set([0, 0], lengthOffset);
      const packet = decodePacket(bytes, frameNamed(name).proto);
      expect(packet.transport?.kind, name).toBe('tcp');
      expect(packet.truncated, name).toBe(false);
      expect(packet.malformed, name).toBeUndefined();
    }
  });
});

describe('malformed headers are reported', () => {
  function withByte(name: string, offset: number, value: number): DecodedPacket {
    const bytes = Uint8Array.from(frameNamed(name).bytes);
    bytes[offset] = value;
    return decodePacket(bytes, frameNamed(name).proto);
  }

  test('IPv4 header length below 20 bytes', () => {
    const packet = withByte('ipv4-udp-dns', 14, 0x43);
    expect(packet.malformed).toEqual({ layer: 'ipv4', reason: 'header length 12 is below the minimum 20 bytes' });
    expect(packet.transport).toBeUndefined();
  });

  test('TCP data offset below 20 bytes', () => {
    const packet = withByte('ipv4-tcp-syn', 14 + 20 + 12, 0x20);
    expect(packet.malformed?.layer).toBe('tcp');
    expect(packet.transport).toMatchObject({ kind: 'tcp', dataOffset: 2 });
  });

  test('an IP total length that ends inside the TCP header is malformed, not truncated', () => {
    const packet = withByte('ipv4-tcp-syn', 14 + 3, 30);
    expect(packet.malformed?.layer).toBe('tcp');
    expect(packet.truncated).toBe(false);
  });

  test('an IPv6 payload length that ends inside an extension header', () => {
    const packet = withByte('ipv6-ah-tcp', 14 + 5, 12);
    expect(packet.malformed?.layer).toBe('ipv6-extension');
  });
});

describe('truncation at every byte offset', () => {
  test.each(allFrames.map((frame) => [frame.name, frame] as const))('%s', (_name, frame) => {
    for (let cut = 0; cut <= frame.bytes.length; cut++) {
      const packet = decodePacket(frame.bytes.slice(0, cut), frame.proto);
      const where = `${frame.name} cut at ${cut}`;
      expect(decodePacket(viewInLargerBuffer(frame.bytes, cut), frame.proto), `${where}: read outside the data`).toEqual(packet);
      expect(packet.length, where).toBe(cut);
      expect(packet.malformed, where).toBeUndefined();
      expect(packet.truncated, where).toBe(cut < frame.packetBytes);
      if (cut < frame.headerBytes) {
        expect(packet.truncatedLayer, where).not.toBe('payload');
        expect(packet.truncatedLayer, where).toBeDefined();
      } else if (cut < frame.packetBytes) {
        expect(packet.truncatedLayer, where).toBe('payload');
      }
      const line = describePacket(frame.bytes.slice(0, cut), frame.proto);
      expect(line.length, where).toBeGreaterThan(0);
      if (packet.truncated) expect(line, where).toContain(`truncated in ${packet.truncatedLayer}`);
    }
  });

  test('a TCP header cut after its ports still gives the ports', () => {
    const frame = frameNamed('ipv6-tcp');
    const packet = decodePacket(frame.bytes.slice(0, 14 + 40 + 10), frame.proto);
    expect(packet.transport).toEqual({ kind: 'ports', protocol: 'tcp', srcPort: 34567, dstPort: 80 });
    expect(packet.truncatedLayer).toBe('tcp');
    expect(describePacket(frame.bytes.slice(0, 14 + 40 + 10), frame.proto)).toBe(
      '[fd00:10:244::5]:34567 > [fd00:10:96::a]:80 TCP len=64 truncated in tcp',
    );
  });
});

describe('arguments', () => {
  test('a Buffer, or any view into a larger buffer, decodes its own bytes only', () => {
    const frame = frameNamed('ipv4-tcp-syn');
    const pooled = Buffer.from(frame.bytes);
    expect(decodePacket(pooled, frame.proto)).toEqual(decodePacket(frame.bytes, frame.proto));
    expect(decodePacket(viewInLargerBuffer(frame.bytes), frame.proto)).toEqual(decodePacket(frame.bytes, frame.proto));
  });

  test('what is no Uint8Array, or a proto no u16, is a TypeError that says what is expected', () => {
    const frame = frameNamed('ipv4-tcp-syn');
    const bad: Array<[unknown, unknown]> = [
      [Array.from(frame.bytes), frame.proto],
      [new Uint16Array(frame.bytes), frame.proto],
      [new DataView(frame.bytes.buffer), frame.proto],
      [new Proxy(frame.bytes, {}), frame.proto],
      [frame.bytes, -1],
      [frame.bytes, 0x10000],
      [frame.bytes, 0x800 + 0.5],
      [frame.bytes, Number.NaN],
      [frame.bytes, '2048'],
      [frame.bytes, undefined],
    ];
    for (const [data, proto] of bad) {
      expect(() => decodePacket(data as Uint8Array, proto as number)).toThrow(
        new TypeError('packetJson(data: Uint8Array, proto: integer 0-65535)'),
      );
    }
  });
});

describe('arbitrary bytes', () => {
  test('random and bit-flipped data never throws nor reads past the end', () => {
    let state = 0x9e3779b9;
    const next = (): number => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return state >>> 0;
    };
    const protos = [0x0800, 0x86dd, 0x0806, 0x8100, 0x88a8, 0x88cc, 0];
    let decoded = 0;
    for (let round = 0; round < 20_000; round++) {
      const base = allFrames[next() % allFrames.length] as TestFrame;
      const bytes = Uint8Array.from(base.bytes.subarray(0, next() % (base.bytes.length + 1)));
      for (let flip = next() % 4; flip >= 0 && bytes.length > 0; flip--) bytes[next() % bytes.length] = next() & 0xff;
      const proto = round % 2 === 0 ? base.proto : (protos[next() % protos.length] as number);
      const packet = decodePacket(bytes, proto);
      expect(decodePacket(viewInLargerBuffer(bytes), proto)).toEqual(packet);
      expect(typeof describePacket(bytes, proto)).toBe('string');
      decoded++;
    }
    expect(decoded).toBe(20_000);
  });
});
