/** Ethernet frames for injected samples: IPv4 with ICMP echo, TCP or UDP, checksums right (tshark reads them). */

function checksum(bytes: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < bytes.length; i += 2) sum += ((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

const ip4 = (text: string): number[] => text.split('.').map(Number);
const mac = (text: string): number[] => text.split(':').map((part) => Number.parseInt(part, 16));

export interface FrameSpec {
  readonly src: string;
  readonly dst: string;
  readonly srcMac?: string;
  readonly dstMac?: string;
  readonly ttl?: number;
}

function ipv4(spec: FrameSpec, protocol: number, payload: Uint8Array): Uint8Array {
  const header = Uint8Array.from([0x45, 0, 0, 0, 0x12, 0x34, 0x40, 0, spec.ttl ?? 64, protocol, 0, 0, ...ip4(spec.src), ...ip4(spec.dst)]);
  const total = header.length + payload.length;
  header[2] = total >>> 8;
  header[3] = total & 0xff;
  const sum = checksum(header);
  header[10] = sum >>> 8;
  header[11] = sum & 0xff;
  const frame = new Uint8Array(14 + total);
  frame.set(mac(spec.dstMac ?? '0a:58:0a:f4:00:04'), 0);
  frame.set(mac(spec.srcMac ?? '0a:58:0a:f4:00:03'), 6);
  frame.set([0x08, 0x00], 12);
  frame.set(header, 14);
  frame.set(payload, 34);
  return frame;
}

/** An ICMP echo request with 56 bytes of data, like ping's. */
export function icmpEcho(spec: FrameSpec & { id?: number; seq: number }): Uint8Array {
  const icmp = new Uint8Array(64);
  icmp[0] = 8;
  icmp[4] = (spec.id ?? 7) >>> 8;
  icmp[5] = (spec.id ?? 7) & 0xff;
  icmp[6] = spec.seq >>> 8;
  icmp[7] = spec.seq & 0xff;
  for (let i = 8; i < 64; i++) icmp[i] = i;
  const sum = checksum(icmp);
  icmp[2] = sum >>> 8;
  icmp[3] = sum & 0xff;
  return ipv4(spec, 1, icmp);
}

function pseudoChecksum(spec: FrameSpec, protocol: number, segment: Uint8Array): number {
  const pseudo = new Uint8Array(12 + segment.length + (segment.length % 2));
  pseudo.set([...ip4(spec.src), ...ip4(spec.dst), 0, protocol, segment.length >>> 8, segment.length & 0xff], 0);
  pseudo.set(segment, 12);
  return checksum(pseudo);
}

/** A TCP SYN from srcPort to dstPort. */
export function tcpSyn(spec: FrameSpec & { srcPort: number; dstPort: number; seq?: number }): Uint8Array {
  const tcp = new Uint8Array(20);
  tcp.set([spec.srcPort >>> 8, spec.srcPort & 0xff, spec.dstPort >>> 8, spec.dstPort & 0xff], 0);
  const seq = spec.seq ?? 1000;
  tcp.set([seq >>> 24, (seq >>> 16) & 0xff, (seq >>> 8) & 0xff, seq & 0xff], 4);
  tcp[12] = 5 << 4;
  tcp[13] = 0x02;
  tcp[14] = 0xff;
  tcp[15] = 0xff;
  const sum = pseudoChecksum(spec, 6, tcp);
  tcp[16] = sum >>> 8;
  tcp[17] = sum & 0xff;
  return ipv4(spec, 6, tcp);
}

/** A UDP datagram with an 8-byte payload. */
export function udp(spec: FrameSpec & { srcPort: number; dstPort: number }): Uint8Array {
  const datagram = new Uint8Array(16);
  datagram.set([spec.srcPort >>> 8, spec.srcPort & 0xff, spec.dstPort >>> 8, spec.dstPort & 0xff, 0, 16], 0);
  const sum = pseudoChecksum(spec, 17, datagram);
  datagram[6] = sum >>> 8;
  datagram[7] = sum & 0xff;
  return ipv4(spec, 17, datagram);
}
