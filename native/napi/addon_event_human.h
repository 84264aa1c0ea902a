// N-API face of watch's human line (render/event_human.h): the HumanLineWriter class.
#pragma once

#include <napi.h>

#include <cstddef>

#include "render/event_human.h"

namespace ovnpsample {

// A human line's texts from six arguments at info[first...]: the verdict (a number below
// event_human::kVerdicts), then policy, namespace, sides, interface and sentence (strings, escaped
// already). False, `texts` untouched, when one is not what it should be: the caller says its usage.
bool human_line_texts(const Napi::CallbackInfo& info, size_t first, HumanLineTexts& texts);

// The HumanLineWriter constructor of this environment.
Napi::Function define_human_line_writer(Napi::Env env);

}  // namespace ovnpsample
