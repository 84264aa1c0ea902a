import { formatIpv4 } from './address.js';
import { readU16 } from './bytes.js';
import type { IpPayload } from './ip-payload.js';
import { UNSTATED_END, hasRoom, markMalformed } from './problems.js';
import type { DecodedPacket, Ipv4Packet } from './types.js';

const IPV4_MIN_HEADER_BYTES = 20;

export function decodeIpv4(packet: DecodedPacket, data: Uint8Array, offset: number): IpPayload | undefined {
  if (!hasRoom(packet, data, offset, IPV4_MIN_HEADER_BYTES, UNSTATED_END, 'ipv4')) return undefined;
  const versionIhl = data[offset] as number;
  const tos = data[offset + 1] as number;
  const flagsFragment = readU16(data, offset + 6);
  const ipv4: Ipv4Packet = {
    kind: 'ipv4',
    version: 4,
    ihl: versionIhl & 0x0f,
    dscp: tos >>> 2,
    ecn: tos & 0x03,
    totalLength: readU16(data, offset + 2),
    id: readU16(data, offset + 4),
    dontFragment: (flagsFragment & 0x4000) !== 0,
    moreFragments: (flagsFragment & 0x2000) !== 0,
    fragmentOffset: (flagsFragment & 0x1fff) * 8,
    ttl: data[offset + 8] as number,
    protocol: data[offset + 9] as number,
    src: formatIpv4(data, offset + 12),
    dst: formatIpv4(data, offset + 16),
  };
  packet.network = ipv4;
  if (versionIhl >>> 4 !== 4) {
    markMalformed(packet, 'ipv4', `IP version ${versionIhl >>> 4} in a packet marked IPv4`);
    return undefined;
  }
  const headerBytes = ipv4.ihl * 4;
  if (headerBytes < IPV4_MIN_HEADER_BYTES) {
    markMalformed(packet, 'ipv4', `header length ${headerBytes} is below the minimum 20 bytes`);
    return undefined;
  }
  // GSO packets sampled before segmentation (BIG TCP) carry total length 0: only the data bounds them.
  const declaredEnd = ipv4.totalLength === 0 ? UNSTATED_END : offset + ipv4.totalLength;
  if (!hasRoom(packet, data, offset, headerBytes, declaredEnd, 'ipv4')) return undefined;
  return {
    protocol: ipv4.protocol,
    start: offset + headerBytes,
    declaredEnd,
    hasTransportHeader: ipv4.fragmentOffset === 0,
  };
}
