import { addon } from '../native/binding';
import { PacketFieldsView, type PacketFields } from '../packet/fields';
import type { LineBuffer } from './line-buffer';

// The packet's parts of watch's lines are rendered natively (native/packet/packet_json.h,
// packet_text.h) from the packet as it was decoded for grouping (native/packet/packet_fields.h):
// fields a source filled without the packet's bytes have no such part.

/**
 * Writes `,"packet":{…},"data":"HEX"}\n` at the end of `out`: false, and nothing written, for
 * fields that come with no packet bytes.
 */
export function writePacketJsonTail(fields: PacketFields, out: LineBuffer): boolean {
  if (!(fields instanceof PacketFieldsView)) return false;
  let end = addon.writePacketJsonTail(fields.words, fields.slot, fields.data, out.buffer, out.end);
  if (end < 0) {
    out.room(-end);
    end = addon.writePacketJsonTail(fields.words, fields.slot, fields.data, out.buffer, out.end);
  }
  out.end = end;
  return true;
}

/** The packet's tuple, `watch`'s packet column: "TCP 10.0.0.1:40000 → 10.0.0.2:80"; "-" without the packet's bytes. */
export function packetTuple(fields: PacketFields): string {
  return fields instanceof PacketFieldsView ? addon.packetTuple(fields.words, fields.slot, fields.data) : '-';
}
