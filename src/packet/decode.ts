import { decodeArp } from './arp.js';
import { decodeEthernet } from './ethernet.js';
import { ETHERTYPE_ARP, ETHERTYPE_IPV4, ETHERTYPE_IPV6 } from './ethertype.js';
import type { IpPayload } from './ip-payload.js';
import { decodeIpv4 } from './ipv4.js';
import { decodeIpv6 } from './ipv6.js';
import { detectLink } from './link.js';
import { UNSTATED_END, markTruncated } from './problems.js';
import { decodeTransport } from './transport.js';
import type { DecodedPacket } from './types.js';

/**
 * Decodes one sampled packet. `proto` is psample's PROTO attribute (the skb ethertype, host
 * order). Never throws and never reads past `data`: cut or contradictory headers are reported
 * in `truncated` / `malformed`, protocols it does not read in `unknown`.
 */
export function decodePacket(data: Uint8Array, proto: number): DecodedPacket {
  const link = detectLink(data, proto);
  const packet: DecodedPacket = { link, length: data.length, etherType: proto, truncated: false };
  let offset = 0;
  if (link === 'ethernet') {
    offset = decodeEthernet(packet, data);
    if (offset < 0) return packet;
  }
  let payload: IpPayload | undefined;
  switch (packet.etherType) {
    case ETHERTYPE_ARP:
      decodeArp(packet, data, offset);
      return packet;
    case ETHERTYPE_IPV4:
      payload = decodeIpv4(packet, data, offset);
      break;
    case ETHERTYPE_IPV6:
      payload = decodeIpv6(packet, data, offset);
      break;
    default:
      packet.unknown = { kind: 'ethertype', value: packet.etherType };
      return packet;
  }
  if (payload === undefined) return packet;
  if (payload.hasTransportHeader) decodeTransport(packet, data, payload);
  if (payload.declaredEnd !== UNSTATED_END && payload.declaredEnd > data.length) markTruncated(packet, 'payload');
  return packet;
}
