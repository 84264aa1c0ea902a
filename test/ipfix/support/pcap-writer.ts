// Capture files as tcpdump and dumpcap write them, for decode --ipfix's tests: UDP datagrams
// over IPv4 or IPv6 in the link types an operator meets (Ethernet, Linux cooked v1 and v2,
// BSD loopback), as classic pcap or pcapng. tshark reads each back in the tests, so the files
// are what Wireshark would take.

export interface UdpDatagram {
  readonly src: string;
  readonly dst: string;
  readonly srcPort: number;
  readonly dstPort: number;
  readonly payload: Uint8Array;
}

export type LinkType = 'ethernet' | 'linux-sll' | 'linux-sll2' | 'null' | 'raw';

export const LINKTYPES: Readonly<Record<LinkType, number>> = { ethernet: 1, 'linux-sll': 113, 'linux-sll2': 276, null: 0, raw: 101 };

function checksum(bytes: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < bytes.length; i += 2) sum += ((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

function ipv6Bytes(text: string): number[] {
  const [head = '', tail = ''] = text.split('::');
  const groups = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const h = groups(head);
  const t = groups(tail);
  const all = text.includes('::') ? [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t] : h;
  return all.flatMap((g) => [g >> 8, g & 0xff]);
}

/** The IP packet (v4 or v6 by the address) carrying the UDP datagram; the UDP checksum is left 0 (IPv4) or computed (IPv6). */
export function ipPacket(datagram: UdpDatagram): Uint8Array {
  const udp = new Uint8Array(8 + datagram.payload.length);
  const view = new DataView(udp.buffer);
  view.setUint16(0, datagram.srcPort);
  view.setUint16(2, datagram.dstPort);
  view.setUint16(4, udp.length);
  udp.set(datagram.payload, 8);
  if (!datagram.src.includes(':')) {
    const header = Uint8Array.from([
      0x45,
      0,
      0,
      0,
      0,
      1,
      0x40,
      0,
      64,
      17,
      0,
      0,
      ...datagram.src.split('.').map(Number),
      ...datagram.dst.split('.').map(Number),
    ]);
    const total = header.length + udp.length;
    header[2] = total >> 8;
    header[3] = total & 0xff;
    const sum = checksum(header);
    header[10] = sum >> 8;
    header[11] = sum & 0xff;
    return Uint8Array.from([...header, ...udp]);
  }
  const src = ipv6Bytes(datagram.src);
  const dst = ipv6Bytes(datagram.dst);
  const pseudo = Uint8Array.from([...src, ...dst, 0, 0, udp.length >> 8, udp.length & 0xff, 0, 0, 0, 17, ...udp]);
  const sum = checksum(pseudo) || 0xffff;
  view.setUint16(6, sum);
  const header = Uint8Array.from([0x60, 0, 0, 0, udp.length >> 8, udp.length & 0xff, 17, 64, ...src, ...dst]);
  return Uint8Array.from([...header, ...udp]);
}

/** The frame of one datagram in a link type. */
export function frame(linkType: LinkType, datagram: UdpDatagram): Uint8Array {
  const ip = ipPacket(datagram);
  const v6 = datagram.src.includes(':');
  const etherType = v6 ? [0x86, 0xdd] : [0x08, 0x00];
  switch (linkType) {
    case 'ethernet':
      return Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ...etherType, ...ip]);
    case 'linux-sll':
      // Packet type 0 (to us), ARPHRD_LOOPBACK 772, address length 6, 8 address bytes, protocol.
      return Uint8Array.from([0, 0, 0x03, 0x04, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0, ...etherType, ...ip]);
    case 'linux-sll2':
      // Protocol, reserved, ifindex 1, ARPHRD_LOOPBACK, packet type 0, address length 6, 8 address bytes.
      return Uint8Array.from([...etherType, 0, 0, 0, 0, 0, 1, 0x03, 0x04, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0, ...ip]);
    case 'null': {
      // BSD loopback: the address family in the writer's byte order (little-endian here), AF_INET 2, AF_INET6 (Linux) 10.
      const family = v6 ? 10 : 2;
      return Uint8Array.from([family, 0, 0, 0, ...ip]);
    }
    case 'raw':
      return ip;
  }
}

/** A classic pcap file (microsecond timestamps, little-endian). */
export function pcapFile(linkType: LinkType, datagrams: readonly UdpDatagram[], startSeconds = 1_795_000_000): Buffer {
  const parts: Buffer[] = [];
  const header = Buffer.alloc(24);
  header.writeUInt32LE(0xa1b2c3d4, 0);
  header.writeUInt16LE(2, 4);
  header.writeUInt16LE(4, 6);
  header.writeUInt32LE(262144, 16);
  header.writeUInt32LE(LINKTYPES[linkType], 20);
  parts.push(header);
  datagrams.forEach((datagram, i) => {
    const bytes = frame(linkType, datagram);
    const record = Buffer.alloc(16);
    record.writeUInt32LE(startSeconds + i, 0);
    record.writeUInt32LE(0, 4);
    record.writeUInt32LE(bytes.length, 8);
    record.writeUInt32LE(bytes.length, 12);
    parts.push(record, Buffer.from(bytes));
  });
  return Buffer.concat(parts);
}

function block(type: number, body: Buffer): Buffer {
  const padded = Buffer.alloc((body.length + 3) & ~3);
  body.copy(padded);
  const total = padded.length + 12;
  const out = Buffer.alloc(total);
  out.writeUInt32LE(type, 0);
  out.writeUInt32LE(total, 4);
  padded.copy(out, 8);
  out.writeUInt32LE(total, total - 4);
  return out;
}

/** A pcapng file: a section, one interface of the link type, an enhanced packet block per datagram. */
export function pcapngFile(linkType: LinkType, datagrams: readonly UdpDatagram[]): Buffer {
  const section = Buffer.alloc(16);
  section.writeUInt32LE(0x1a2b3c4d, 0);
  section.writeUInt16LE(1, 4);
  section.writeUInt16LE(0, 6);
  section.writeBigInt64LE(-1n, 8);
  const iface = Buffer.alloc(8);
  iface.writeUInt16LE(LINKTYPES[linkType], 0);
  iface.writeUInt32LE(262144, 4);
  const blocks = [block(0x0a0d0d0a, section), block(1, iface)];
  datagrams.forEach((datagram, i) => {
    const bytes = Buffer.from(frame(linkType, datagram));
    const head = Buffer.alloc(20);
    const micros = BigInt(1_795_000_000 + i) * 1_000_000n;
    head.writeUInt32LE(0, 0);
    head.writeUInt32LE(Number(micros >> 32n), 4);
    head.writeUInt32LE(Number(micros & 0xffffffffn), 8);
    head.writeUInt32LE(bytes.length, 12);
    head.writeUInt32LE(bytes.length, 16);
    blocks.push(block(6, Buffer.concat([head, bytes])));
  });
  return Buffer.concat(blocks);
}
