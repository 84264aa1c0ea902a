// Tests that need the kernel run in a network namespace of their own, so NETLINK_USERSOCK
// multicast neither reaches nor hears anything else on the machine (other tests, other runs).
#pragma once

#include <sched.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace ovnpsample::testing {

constexpr int kSkipped = 77;  // ctest's SKIP_RETURN_CODE

// Moves the calling thread, and the threads it starts afterwards, into a new network namespace.
// Returns 0, or the exit status to end the test with (having said why).
inline int enter_private_netns(const char* test) {
  if (unshare(CLONE_NEWNET) == 0) return 0;
  const int err = errno;
  if (err == EPERM) {
    std::printf(
        "%s skipped: a private network namespace needs root (CAP_SYS_ADMIN), and NETLINK_USERSOCK multicast "
        "CAP_NET_ADMIN\n",
        test);
    return kSkipped;
  }
  std::fprintf(stderr, "%s: unshare(CLONE_NEWNET): %s\n", test, std::strerror(err));
  return 1;
}

}  // namespace ovnpsample::testing
