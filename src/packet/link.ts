import { readU16 } from './bytes.js';
import { ETHERTYPE_IPV4, ETHERTYPE_IPV6, isVlanTpid } from './ethertype.js';
import type { LinkType } from './types.js';

function ipVersionFor(proto: number): number {
  if (proto === ETHERTYPE_IPV4) return 4;
  if (proto === ETHERTYPE_IPV6) return 6;
  return -1;
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
  if (!looksEthernet) return looksRaw ? 'raw' : 'ethernet';
  if (!looksRaw || data.length === 14) return 'ethernet';
  // Both readings fit (a raw packet whose source address happens to hold the ethertype):
  // an Ethernet frame of this proto carries the IP version nibble right after its header.
  return isVlanTpid(etherTypeAt12) || (data[14] as number) >>> 4 === version ? 'ethernet' : 'raw';
}
