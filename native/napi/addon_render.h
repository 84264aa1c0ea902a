// N-API face of the sample line renderer (sample_lines.h): the LineRenderer class.
#pragma once

#include <napi.h>

namespace ovnpsample {

// The LineRenderer constructor of this environment.
Napi::Function define_line_renderer(Napi::Env env);

}  // namespace ovnpsample
