// Giving up privileges once the psample socket is open and joined: every capability set of every
// thread, and with a user the uid, gid and supplementary groups of the whole process.
//
// Linux keeps credentials per thread. glibc makes setgroups/setresgid/setresuid process-wide, and
// the kernel clears the permitted, effective and ambient sets of each thread whose ids all leave
// 0; capset(2) and prctl(2) every other thread runs itself (every_thread.h). A thread that blocks
// every signal cannot be asked: Node's SIGUSR1 inspector watchdog, which only ever waits on a
// semaphore. Such threads are reported; only a switch away from uid 0 clears their sets.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "privileges/thread_credentials.h"
#include "socket/setup_error.h"

namespace ovnpsample {

struct PrivilegeRequest {
  std::string user;   // name or decimal uid; empty: keep the ids
  std::string group;  // name or decimal gid; empty: the user's primary group
};

struct PrivilegeReport {
  bool switched_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  bool bounding_cleared = false;
  // Why the bounding set stayed as it was (empty when it was cleared).
  std::string bounding_kept_because;
  unsigned threads = 0;
  // Threads the signal could not reach that still hold a capability (see above).
  std::vector<ThreadCredentials> unreached;
};

// Returns INVALID_OPTION for an unknown user or group, PRIVILEGE_DROP when a step fails (the
// message says which; the process may then hold fewer privileges than before, never more).
SetupError drop_privileges(const PrivilegeRequest& request, PrivilegeReport& report);

}  // namespace ovnpsample
