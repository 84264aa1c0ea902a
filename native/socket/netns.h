// Entering a network namespace on the calling thread only (setns affects one thread).
#pragma once

#include <string>

#include "socket/setup_error.h"

namespace ovnpsample {

// Moves the calling thread into the namespace; empty spec = stay where we are.
// spec: a name under /run/netns, a path to a namespace file, or a decimal pid.
SetupError enter_netns(const std::string& spec);

}  // namespace ovnpsample
