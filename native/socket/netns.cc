#include "socket/netns.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>

namespace ovnpsample {

// `path` is the namespace's file: src/psample/options.ts (netnsPath) turns names and pids into it.
SetupError enter_netns(const std::string& path) {
  if (path.empty()) return {};
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT || err == ESRCH)
      return setup_error("NETNS_NOT_FOUND",
                         "network namespace " + path +
                             " not found: give a name listed by `ip netns list`, a path, or the pid of a process in it",
                         err);
    return setup_error("NETNS_PERMISSION",
                       describe_errno("cannot open network namespace " + path, err) + ": run as root", err);
  }
  int rc = setns(fd, CLONE_NEWNET);
  int err = errno;
  close(fd);
  if (rc != 0) {
    if (err == EINVAL) return setup_error("NETNS_NOT_FOUND", path + " is not a network namespace file", err);
    return setup_error(
        "NETNS_PERMISSION",
        describe_errno("cannot enter network namespace " + path, err) + ": entering a namespace needs CAP_SYS_ADMIN",
        err);
  }
  return {};
}

}  // namespace ovnpsample
