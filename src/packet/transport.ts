import { decodeIcmp } from './icmp.js';
import { decodeIcmpv6 } from './icmpv6.js';
import type { IpPayload } from './ip-payload.js';
import { IPPROTO_ICMP, IPPROTO_ICMPV6, IPPROTO_NONE, IPPROTO_SCTP, IPPROTO_TCP, IPPROTO_UDP } from './ip-protocol.js';
import { decodeSctp } from './sctp.js';
import { decodeTcp } from './tcp.js';
import type { DecodedPacket } from './types.js';
import { decodeUdp } from './udp.js';

export function decodeTransport(packet: DecodedPacket, data: Uint8Array, payload: IpPayload): void {
  const { start, declaredEnd } = payload;
  switch (payload.protocol) {
    case IPPROTO_TCP:
      decodeTcp(packet, data, start, declaredEnd);
      return;
    case IPPROTO_UDP:
      decodeUdp(packet, data, start, declaredEnd);
      return;
    case IPPROTO_SCTP:
      decodeSctp(packet, data, start, declaredEnd);
      return;
    case IPPROTO_ICMP:
      decodeIcmp(packet, data, start, declaredEnd);
      return;
    case IPPROTO_ICMPV6:
      decodeIcmpv6(packet, data, start, declaredEnd);
      return;
    case IPPROTO_NONE:
      return;
    default:
      packet.unknown = { kind: 'ip-protocol', value: payload.protocol };
  }
}
