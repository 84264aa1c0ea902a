// Running a function in every other thread of the process. Linux keeps credentials per thread,
// and capset(2) and prctl(2) act on the calling thread only: glibc has each thread make its own
// setxid call through a signal no thread can block, and libcap's psx does the same for any
// system call. This is that, for one async-signal-safe function: a real-time signal to each
// thread (tgkill), whose handler runs it, rescanning /proc/self/task until no thread is left
// that has not (threads started meanwhile by one that had not run it yet).
#pragma once

#include <sys/types.h>

#include <set>
#include <string>

#include "socket/setup_error.h"

namespace ovnpsample {

// Runs in a signal handler: system calls only. Returns 0 or an errno.
using ThreadFunction = int (*)(const void* context);

struct EveryThreadResult {
  std::set<pid_t> reached;  // threads that ran the function (never the caller); not those blocking the signal
};

// `what` names the function in error messages. Fails (PRIVILEGE_DROP) when a thread reports an
// errno, or does not run the handler within 5 s: then the handler stays installed for good, and
// every later call fails at once.
SetupError run_in_every_other_thread(ThreadFunction function, const void* context, const std::string& what,
                                     EveryThreadResult& result);

}  // namespace ovnpsample
