import { formatMac } from './address.js';
import { readU16 } from './bytes.js';
import { isVlanTpid } from './ethertype.js';
import { UNSTATED_END, hasRoom } from './problems.js';
import type { DecodedPacket, VlanTag } from './types.js';
import { decodeVlanTag } from './vlan.js';

const ETHERNET_HEADER_BYTES = 14;
const VLAN_TAG_BYTES = 4;

/** Sets `ethernet` and `etherType`; returns where the network layer starts, or -1 if it is not there. */
export function decodeEthernet(packet: DecodedPacket, data: Uint8Array): number {
  if (!hasRoom(packet, data, 0, ETHERNET_HEADER_BYTES, UNSTATED_END, 'ethernet')) return -1;
  const vlans: VlanTag[] = [];
  packet.ethernet = { dst: formatMac(data, 0), src: formatMac(data, 6), vlans };
  let etherType = readU16(data, 12);
  let offset = ETHERNET_HEADER_BYTES;
  while (isVlanTpid(etherType)) {
    if (!hasRoom(packet, data, offset, VLAN_TAG_BYTES, UNSTATED_END, 'vlan')) return -1;
    vlans.push(decodeVlanTag(etherType, readU16(data, offset)));
    etherType = readU16(data, offset + 2);
    offset += VLAN_TAG_BYTES;
  }
  packet.etherType = etherType;
  return offset;
}
