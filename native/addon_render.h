// N-API face of the sample JSON renderer (sample_json.h): the JsonLineRenderer class.
#pragma once

#include <napi.h>

namespace ovnpsample {

// The JsonLineRenderer constructor of this environment.
Napi::Function define_json_line_renderer(Napi::Env env);

}  // namespace ovnpsample
