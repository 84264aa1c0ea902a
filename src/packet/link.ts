import { readU16 } from './bytes.js';
import { ETHERTYPE_IPV4, ETHERTYPE_IPV6, isVlanTpid } from './ethertype.js';
import type { LinkType } from './types.js';

function ipVersionFor(proto: number): number {
  if (proto === ETHERTYPE_IPV4) return 4;
  if (proto === ETHERTYPE_IPV6) return 6;
  return -1;
}

/**
 * Both readings fit: a raw packet whose source address happens to spell the ethertype or a VLAN
 * TPID at bytes 12-13. A real Ethernet frame of this proto reaches the proto after its tags and
 * then the matching IP version nibble; when the data ends before that, the common case wins.
 */
function ethernetOutweighsRaw(data: Uint8Array, proto: number, version: number): boolean {
  let offset = 12;
  while (offset + 2 <= data.length && isVlanTpid(readU16(data, offset))) offset += 4;
  if (offset + 2 > data.length) return true;
  if (readU16(data, offset) !== proto) return false;
  return offset + 2 >= data.length || (data[offset + 2] as number) >>> 4 === version;
}

/**
 * psample DATA starts at the MAC header on Ethernet devices and at the IP header on devices
 * without one (tun, wireguard, ipip). PROTO is the skb's ethertype, so an Ethernet header shows
 * it (or a VLAN TPID) at bytes 12-13, and a raw IP packet shows the matching version nibble.
 */
export function detectLink(data: Uint8Array, proto: number): LinkType {
  const version = ipVersionFor(proto);
  const looksRaw = version > 0 && data.length > 0 && (data[0] as number) >>> 4 === version;
  if (data.length < 14) return looksRaw ? 'raw' : 'ethernet';
  const etherTypeAt12 = readU16(data, 12);
  const looksEthernet = etherTypeAt12 === proto || isVlanTpid(etherTypeAt12);
  if (!looksRaw) return 'ethernet';
  if (!looksEthernet) return 'raw';
  return ethernetOutweighsRaw(data, proto, version) ? 'ethernet' : 'raw';
}
