import { addon } from '../native/binding';
import type { DecodedPacket } from './types.js';

/**
 * Decodes one sampled packet. `proto` is psample's PROTO attribute (the skb ethertype, host
 * order). Never throws on any bytes and never reads past `data`: cut or contradictory headers
 * are reported in `truncated` / `malformed`, protocols it does not read in `unknown`. The
 * decoder is the addon's (native/packet/packet_decoder.cc), the one that writes the JSON output
 * formats' `packet`: this is its JSON, parsed. Throws a TypeError for data that is no
 * Uint8Array or a proto outside 0-65535.
 */
export function decodePacket(data: Uint8Array, proto: number): DecodedPacket {
  return JSON.parse(addon.packetJson(data, proto)) as DecodedPacket;
}
