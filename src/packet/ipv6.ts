import { formatIpv6 } from './address.js';
import { readU16, readU32 } from './bytes.js';
import type { IpPayload } from './ip-payload.js';
import { IPPROTO_FRAGMENT } from './ip-protocol.js';
import { ipv6ExtensionBytes, ipv6ExtensionName } from './ipv6-extension.js';
import { UNSTATED_END, hasRoom, markMalformed } from './problems.js';
import type { DecodedPacket, Ipv6Packet } from './types.js';

const IPV6_HEADER_BYTES = 40;
const EXTENSION_MIN_BYTES = 8;

export function decodeIpv6(packet: DecodedPacket, data: Uint8Array, offset: number): IpPayload | undefined {
  if (!hasRoom(packet, data, offset, IPV6_HEADER_BYTES, UNSTATED_END, 'ipv6')) return undefined;
  const first = readU32(data, offset);
  const trafficClass = (first >>> 20) & 0xff;
  const nextHeader = data[offset + 6] as number;
  const ipv6: Ipv6Packet = {
    kind: 'ipv6',
    version: 6,
    dscp: trafficClass >>> 2,
    ecn: trafficClass & 0x03,
    flowLabel: first & 0xfffff,
    payloadLength: readU16(data, offset + 4),
    nextHeader,
    hopLimit: data[offset + 7] as number,
    src: formatIpv6(data, offset + 8),
    dst: formatIpv6(data, offset + 24),
    extensions: [],
    protocol: nextHeader,
  };
  packet.network = ipv6;
  if (first >>> 28 !== 6) {
    markMalformed(packet, 'ipv6', `IP version ${first >>> 28} in a packet marked IPv6`);
    return undefined;
  }
  // Payload length 0 means a jumbogram or a BIG TCP GSO packet: only the data bounds them.
  const declaredEnd = ipv6.payloadLength === 0 ? UNSTATED_END : offset + IPV6_HEADER_BYTES + ipv6.payloadLength;
  let cursor = offset + IPV6_HEADER_BYTES;
  let name = ipv6ExtensionName(ipv6.protocol);
  while (name !== undefined) {
    if (!hasRoom(packet, data, cursor, EXTENSION_MIN_BYTES, declaredEnd, 'ipv6-extension')) return undefined;
    const length = ipv6ExtensionBytes(ipv6.protocol, data[cursor + 1] as number);
    if (!hasRoom(packet, data, cursor, length, declaredEnd, 'ipv6-extension')) return undefined;
    ipv6.extensions.push({ protocol: ipv6.protocol, name, length });
    if (ipv6.protocol === IPPROTO_FRAGMENT) {
      const offsetFlags = readU16(data, cursor + 2);
      ipv6.fragment = {
        offset: offsetFlags & 0xfff8,
        moreFragments: (offsetFlags & 1) !== 0,
        id: readU32(data, cursor + 4),
      };
    }
    ipv6.protocol = data[cursor] as number;
    cursor += length;
    // Past a non-first fragment header comes the middle of the payload, not another header.
    name = ipv6.fragment !== undefined && ipv6.fragment.offset !== 0 ? undefined : ipv6ExtensionName(ipv6.protocol);
  }
  return {
    protocol: ipv6.protocol,
    start: cursor,
    declaredEnd,
    hasTransportHeader: ipv6.fragment === undefined || ipv6.fragment.offset === 0,
  };
}
