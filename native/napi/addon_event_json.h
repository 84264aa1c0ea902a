// N-API face of watch's JSON line (render/event_json.h): the EventJsonWriter class.
#pragma once

#include <napi.h>

namespace ovnpsample {

// The EventJsonWriter constructor of this environment.
Napi::Function define_event_json_writer(Napi::Env env);

}  // namespace ovnpsample
