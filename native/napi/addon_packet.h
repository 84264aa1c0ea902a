// N-API surface of the packet decoder: its forms (native/packet/packet_json.h,
// native/packet/packet_text.h) and its fields (native/packet/packet_fields.h).
#pragma once

#include <napi.h>

namespace ovnpsample {

// Adds to the addon's exports:
//   packetJson(data: Uint8Array, proto): string          the decoded packet's JSON
//   packetText(data: Uint8Array, proto): string          its description
//   packetFields(batch: ArrayBuffer, count, littleEndian: boolean, words: Uint32Array): string
//       every sample's packet of a batch decoded into words (kWords a record), the address text returned
//   decodePacketFields(data: Uint8Array, proto, words: Uint32Array): string    one packet, the same way
//   packetTuple(words: Uint32Array, slot, data: Uint8Array): string            the tuple of a decoded packet
//   writePacketJsonTail(words: Uint32Array, slot, data: Uint8Array, out: Uint8Array, at): number
//       writes `,"packet":{…},"data":"HEX"}\n` (watch's JSON line's end) at out[at…]; returns where it
//       ends, or minus the bytes it needs when they do not fit (nothing written then)
//   addressText(bytes: Uint8Array, offset, length: 4 | 16): string   an IPv4 or IPv6 address as text
//       (packet/address_text.h), for psample's tunnel metadata
void export_packet_forms(Napi::Env env, Napi::Object exports);

}  // namespace ovnpsample
