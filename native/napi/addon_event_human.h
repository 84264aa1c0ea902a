// N-API face of watch's human line (render/event_human.h): the HumanLineWriter class.
#pragma once

#include <napi.h>

namespace ovnpsample {

// The HumanLineWriter constructor of this environment.
Napi::Function define_human_line_writer(Napi::Env env);

}  // namespace ovnpsample
