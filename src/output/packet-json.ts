import { addon } from '../native/binding';

/**
 * The decoded packet's JSON, as decodePacket(data, proto) would be written by JSON.stringify,
 * straight from the native decoder (native/packet/packet_json.cc): no object is built. ASCII only.
 */
export function packetJsonText(data: Uint8Array, proto: number): string {
  return addon.packetJson(data, proto);
}
