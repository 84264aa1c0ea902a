import { formatIpv4, formatMac } from './address.js';
import { readU16 } from './bytes.js';
import { ETHERTYPE_IPV4 } from './ethertype.js';
import { UNSTATED_END, hasRoom } from './problems.js';
import type { ArpPacket, DecodedPacket } from './types.js';

const ARP_FIXED_BYTES = 8;
const ARP_ETHERNET_IPV4_BYTES = 28;
const HARDWARE_ETHERNET = 1;

export function decodeArp(packet: DecodedPacket, data: Uint8Array, offset: number): void {
  if (!hasRoom(packet, data, offset, ARP_FIXED_BYTES, UNSTATED_END, 'arp')) return;
  const arp: ArpPacket = {
    kind: 'arp',
    hardwareType: readU16(data, offset),
    protocolType: readU16(data, offset + 2),
    op: readU16(data, offset + 6),
  };
  packet.network = arp;
  const ethernetIpv4 =
    arp.hardwareType === HARDWARE_ETHERNET &&
    arp.protocolType === ETHERTYPE_IPV4 &&
    data[offset + 4] === 6 &&
    data[offset + 5] === 4;
  if (!ethernetIpv4 || !hasRoom(packet, data, offset, ARP_ETHERNET_IPV4_BYTES, UNSTATED_END, 'arp')) return;
  arp.senderMac = formatMac(data, offset + 8);
  arp.senderIp = formatIpv4(data, offset + 14);
  arp.targetMac = formatMac(data, offset + 18);
  arp.targetIp = formatIpv4(data, offset + 24);
}
