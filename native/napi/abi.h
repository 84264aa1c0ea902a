// What the JavaScript side must agree on with this addon, described for it at load time:
// the batch layout and its byte order (batch_layout.h) and the socket's counters
// (socket_stats.h). scripts/generate-native-abi.mjs writes it into src/native/abi.generated.ts.
#pragma once

#include <napi.h>

namespace ovnpsample {

Napi::Object describe_abi(Napi::Env env);

}  // namespace ovnpsample
