// N-API surface of the packet decoder (native/packet_json.h).
#pragma once

#include <napi.h>

namespace ovnpsample {

// Adds packetJson(data: Uint8Array, proto: number): string to the addon's exports.
void export_packet_json(Napi::Env env, Napi::Object exports);

}  // namespace ovnpsample
