// N-API face of watch --aggregate's native flows (aggregate/flow_table.h): the NativeFlowTable class.
#pragma once

#include <napi.h>

#include <memory>

#include "wire/batch_consumer.h"

namespace ovnpsample {

// The NativeFlowTable constructor of this environment.
Napi::Function define_flow_table(Napi::Env env);

// The table a NativeFlowTable object holds, for a reader thread to feed; nullptr for anything else.
std::shared_ptr<BatchConsumer> flow_table_consumer(const Napi::Value& value);

}  // namespace ovnpsample
