// N-API face of watch's native lines (render/watch_lines.h): the NativeWatchLines class.
#pragma once

#include <napi.h>

namespace ovnpsample {

// The NativeWatchLines constructor of this environment.
Napi::Function define_watch_lines(Napi::Env env);

}  // namespace ovnpsample
