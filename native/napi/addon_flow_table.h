// N-API face of watch --aggregate's native flows (aggregate/flow_table.h): the NativeFlowTable class.
#pragma once

#include <napi.h>

namespace ovnpsample {

// The NativeFlowTable constructor of this environment.
Napi::Function define_flow_table(Napi::Env env);

}  // namespace ovnpsample
