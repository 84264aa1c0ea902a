import { addon } from '../native/binding';
import type { CapturedFrame } from './capture-file';

/** A UDP datagram found in a captured frame. */
export interface CapturedDatagram {
  readonly src: string;
  readonly dst: string;
  readonly srcPort: number;
  readonly dstPort: number;
  readonly payload: Buffer;
  readonly timeMs: number;
}

/** Why a frame holds no UDP datagram this reader can use. */
export type FrameSkip = 'link-type' | 'not-udp' | 'fragment' | 'truncated';

export const LINKTYPE = { null: 0, ethernet: 1, raw: 101, loop: 108, linuxSll: 113, ipv4: 228, ipv6: 229, linuxSll2: 276 } as const;

const ETHERTYPE_IPV4 = 0x0800;
const ETHERTYPE_IPV6 = 0x86dd;
const VLAN_TPIDS = new Set([0x8100, 0x88a8, 0x9100]);
// BSD loopback address families for IPv6: Linux 10, the BSDs 24, 28 and 30.
const AF_INET6 = new Set([10, 24, 28, 30]);
const IPV6_EXTENSIONS = new Set([0, 43, 60]);
const IPV6_FRAGMENT = 44;
const UDP = 17;

/** Where the IP header starts and which version, by link type; undefined for what carries no IP. */
function ipStart(frame: CapturedFrame): { at: number; version: 4 | 6 } | 'link-type' | 'not-udp' | 'truncated' {
  const data = frame.data;
  const u16 = (at: number): number => (data[at]! << 8) | data[at + 1]!;
  const byEtherType = (etherType: number, at: number): { at: number; version: 4 | 6 } | 'not-udp' =>
    etherType === ETHERTYPE_IPV4 ? { at, version: 4 } : etherType === ETHERTYPE_IPV6 ? { at, version: 6 } : 'not-udp';
  switch (frame.linkType) {
    case LINKTYPE.ethernet: {
      let at = 12;
      if (data.length < 14) return 'truncated';
      while (VLAN_TPIDS.has(u16(at))) {
        at += 4;
        if (data.length < at + 2) return 'truncated';
      }
      return byEtherType(u16(at), at + 2);
    }
    case LINKTYPE.linuxSll:
      return data.length < 16 ? 'truncated' : byEtherType(u16(14), 16);
    case LINKTYPE.linuxSll2:
      return data.length < 20 ? 'truncated' : byEtherType(u16(0), 20);
    case LINKTYPE.null:
    case LINKTYPE.loop: {
      if (data.length < 4) return 'truncated';
      // DLT_NULL is in the writer's byte order, DLT_LOOP in network order: either way one end is 0.
      const family = frame.linkType === LINKTYPE.loop ? (u16(0) << 16) | u16(2) : data[0]! !== 0 ? data[0]! : data[3]!;
      return family === 2 ? { at: 4, version: 4 } : AF_INET6.has(family) ? { at: 4, version: 6 } : 'not-udp';
    }
    case LINKTYPE.raw:
      if (data.length < 1) return 'truncated';
      return data[0]! >> 4 === 4 ? { at: 0, version: 4 } : data[0]! >> 4 === 6 ? { at: 0, version: 6 } : 'not-udp';
    case LINKTYPE.ipv4:
      return { at: 0, version: 4 };
    case LINKTYPE.ipv6:
      return { at: 0, version: 6 };
    default:
      return 'link-type';
  }
}

/**
 * The UDP datagram a frame carries (IPv4 or IPv6, over Ethernet with or without VLAN tags, Linux
 * cooked v1/v2, BSD loopback or raw IP), or why there is none. Fragments are not reassembled:
 * OVS's IPFIX messages fit one datagram.
 */
export function udpDatagram(frame: CapturedFrame): CapturedDatagram | FrameSkip {
  const start = ipStart(frame);
  if (typeof start === 'string') return start;
  const data = frame.data;
  let at = start.at;
  let src: string;
  let dst: string;
  let end: number;
  if (start.version === 4) {
    if (data.length < at + 20) return 'truncated';
    const headerBytes = (data[at]! & 0x0f) * 4;
    const total = (data[at + 2]! << 8) | data[at + 3]!;
    const fragment = ((data[at + 6]! << 8) | data[at + 7]!) & 0x3fff;
    if (data[at + 9] !== UDP) return 'not-udp';
    if (fragment !== 0) return 'fragment';
    src = addon.addressText(data, at + 12, 4);
    dst = addon.addressText(data, at + 16, 4);
    end = at + total;
    at += headerBytes;
  } else {
    if (data.length < at + 40) return 'truncated';
    let next = data[at + 6]!;
    end = at + 40 + ((data[at + 4]! << 8) | data[at + 5]!);
    src = addon.addressText(data, at + 8, 16);
    dst = addon.addressText(data, at + 24, 16);
    at += 40;
    while (IPV6_EXTENSIONS.has(next)) {
      if (data.length < at + 2) return 'truncated';
      next = data[at]!;
      at += (data[at + 1]! + 1) * 8;
    }
    if (next === IPV6_FRAGMENT) return 'fragment';
    if (next !== UDP) return 'not-udp';
  }
  if (data.length < at + 8) return 'truncated';
  const length = (data[at + 4]! << 8) | data[at + 5]!;
  if (length < 8 || at + length > Math.min(end, data.length)) return 'truncated';
  return {
    src,
    dst,
    srcPort: (data[at]! << 8) | data[at + 1]!,
    dstPort: (data[at + 2]! << 8) | data[at + 3]!,
    payload: Buffer.from(data.buffer, data.byteOffset + at + 8, length - 8),
    timeMs: frame.timeMs,
  };
}
