// Entering a network namespace on the calling thread only (setns affects one thread).
#pragma once

#include <string>

#include "socket/setup_error.h"

namespace ovnpsample {

// Moves the calling thread into the namespace; empty spec = stay where we are.
// path: the network namespace file (/run/netns/NAME, /proc/PID/ns/net, or any bind mount of one).
SetupError enter_netns(const std::string& path);

}  // namespace ovnpsample
