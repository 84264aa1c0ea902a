import { addon } from '../native/binding';
import { PacketFieldsView, type PacketFields } from '../packet/fields';

// The packet's part of watch's human line is rendered natively (native/packet/packet_text.h)
// from the packet as it was decoded for grouping (native/packet/packet_fields.h): fields a
// source filled without the packet's bytes have none.

/** The packet's tuple, `watch`'s packet column: "TCP 10.0.0.1:40000 → 10.0.0.2:80"; "-" without the packet's bytes. */
export function packetTuple(fields: PacketFields): string {
  return fields instanceof PacketFieldsView ? addon.packetTuple(fields.words, fields.slot, fields.data) : '-';
}
