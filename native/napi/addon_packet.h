// N-API surface of the packet decoder's two forms (native/packet/packet_json.h, native/packet/packet_text.h).
#pragma once

#include <napi.h>

namespace ovnpsample {

// Adds packetJson(data: Uint8Array, proto: number): string and packetText(…) to the addon's exports.
void export_packet_forms(Napi::Env env, Napi::Object exports);

}  // namespace ovnpsample
