import { formatIpv6 } from './address.js';
import { readU16 } from './bytes.js';
import { hasRoom, roomLeft } from './problems.js';
import type { DecodedPacket, Icmpv6Message } from './types.js';

const ICMPV6_HEADER_BYTES = 8;
/** Neighbor discovery messages carrying a target address after the 8-byte header. */
const TARGET_MESSAGE_BYTES = 24;
const ECHO_REQUEST = 128;
const ECHO_REPLY = 129;
const NEIGHBOR_SOLICITATION = 135;
const NEIGHBOR_ADVERTISEMENT = 136;
const REDIRECT = 137;

const ICMPV6_TYPE_NAMES: Readonly<Record<number, string>> = {
  1: 'destination-unreachable',
  2: 'packet-too-big',
  3: 'time-exceeded',
  4: 'parameter-problem',
  128: 'echo-request',
  129: 'echo-reply',
  130: 'multicast-listener-query',
  131: 'multicast-listener-report',
  132: 'multicast-listener-done',
  133: 'router-solicitation',
  134: 'router-advertisement',
  135: 'neighbor-solicitation',
  136: 'neighbor-advertisement',
  137: 'redirect',
  143: 'multicast-listener-report-v2',
};

export function decodeIcmpv6(packet: DecodedPacket, data: Uint8Array, offset: number, declaredEnd: number): void {
  const complete = hasRoom(packet, data, offset, ICMPV6_HEADER_BYTES, declaredEnd, 'icmpv6');
  if (!complete && roomLeft(data, offset, declaredEnd) < 2) return;
  const type = data[offset] as number;
  const icmpv6: Icmpv6Message = { kind: 'icmpv6', type, code: data[offset + 1] as number };
  const name = ICMPV6_TYPE_NAMES[type];
  if (name !== undefined) icmpv6.name = name;
  packet.transport = icmpv6;
  if (!complete) return;
  if (type === ECHO_REQUEST || type === ECHO_REPLY) {
    icmpv6.id = readU16(data, offset + 4);
    icmpv6.seq = readU16(data, offset + 6);
  } else if (type === NEIGHBOR_SOLICITATION || type === NEIGHBOR_ADVERTISEMENT || type === REDIRECT) {
    if (hasRoom(packet, data, offset, TARGET_MESSAGE_BYTES, declaredEnd, 'icmpv6')) {
      icmpv6.target = formatIpv6(data, offset + 8);
    }
  }
}
