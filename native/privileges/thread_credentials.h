// The credentials of one thread as /proc/<pid>/task/<tid>/status shows them. Linux keeps
// capabilities, ids and no_new_privs per thread: this is how every thread's are checked.
// The parser is pure (no system calls), so it can be tested on its own.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ovnpsample {

struct ThreadCredentials {
  pid_t tid = 0;
  std::string name;
  uint32_t uid[4] = {};  // real, effective, saved, filesystem
  uint32_t gid[4] = {};
  std::vector<uint32_t> groups;
  uint64_t inheritable = 0;
  uint64_t permitted = 0;
  uint64_t effective = 0;
  uint64_t bounding = 0;
  uint64_t ambient = 0;
  bool no_new_privs = false;
  uint64_t blocked_signals = 0;  // SigBlk: bit (n - 1) is signal n

  bool holds_capabilities() const { return (inheritable | permitted | effective | ambient) != 0; }
};

// Parses the text of a status file; false when a field the checks rely on is missing.
bool parse_thread_status(const std::string& text, ThreadCredentials& out);

// Every thread of this process now (tids from /proc/self/task; a thread that ends while it is
// read is left out).
std::vector<ThreadCredentials> read_thread_credentials();

}  // namespace ovnpsample
