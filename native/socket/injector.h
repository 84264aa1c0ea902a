// Multicasts raw netlink messages, so psample-format samples can be injected where the kernel
// has no psample family (tests, replays) through the real kernel netlink path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "socket/psample_socket.h"
#include "socket/setup_error.h"

namespace ovnpsample {

class Injector {
 public:
  // protocol: kUsersock or kGeneric; group_id 1-32; netns as for readers (entered on a helper thread).
  static std::unique_ptr<Injector> open(SourceProtocol protocol, uint32_t group_id, const std::string& netns,
                                        SetupError& error);
  ~Injector();
  // 0, or the errno of a failed send.
  int send(const uint8_t* message, size_t length) const;
  void close();

 private:
  Injector(int fd, uint32_t group_id) : fd_(fd), group_id_(group_id) {}
  int fd_;
  uint32_t group_id_;
};

}  // namespace ovnpsample
