import { addon } from '../native/binding';

/**
 * One short human line for a sampled packet, tcpdump-like:
 * `10.0.0.1:34567 > 10.0.0.2:80 TCP [SYN] len=74`. `proto` is psample's PROTO attribute, as
 * decodePacket() takes it. Written natively from the same decoder as decodePacket()
 * (native/packet/packet_text.h, which lists every form); the text output's lines end with it. Throws a
 * TypeError for data that is no Uint8Array or a proto outside 0-65535.
 */
export function describePacket(data: Uint8Array, proto: number): string {
  return addon.packetText(data, proto);
}
