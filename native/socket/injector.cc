#include "socket/injector.h"

#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <thread>

#include "socket/netns.h"

namespace ovnpsample {

std::unique_ptr<Injector> Injector::open(SourceProtocol protocol, uint32_t group_id, const std::string& netns,
                                         SetupError& error) {
  if (group_id < 1 || group_id > 32) {
    error = setup_error("INVALID_OPTION", "groupId must be 1-32: netlink multicast sends address groups by bitmask");
    return nullptr;
  }
  int fd = -1;
  // setns changes only the calling thread: a short-lived thread keeps the caller where it is,
  // and the socket stays bound to the namespace it was created in.
  try {
    std::thread opener([&] {
      if (error = enter_netns(netns); error.failed()) return;
      fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC,
                  protocol == SourceProtocol::kUsersock ? NETLINK_USERSOCK : NETLINK_GENERIC);
      if (fd < 0) error = setup_error("SOCKET_ERROR", describe_errno("cannot open a netlink socket", errno), errno);
    });
    opener.join();
  } catch (const std::system_error& e) {
    error = setup_error("SOCKET_ERROR", std::string("cannot start a thread: ") + e.what());
  }
  if (error.failed()) return nullptr;
  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  if (bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
    error = setup_error("SOCKET_ERROR", describe_errno("cannot bind the netlink socket", errno), errno);
    ::close(fd);
    return nullptr;
  }
  return std::unique_ptr<Injector>(new Injector(fd, group_id));
}

Injector::~Injector() { close(); }

void Injector::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

int Injector::send(const uint8_t* message, size_t length) const {
  if (fd_ < 0) return EBADF;
  sockaddr_nl to{};
  to.nl_family = AF_NETLINK;
  to.nl_groups = 1u << (group_id_ - 1);
  for (;;) {
    if (sendto(fd_, message, length, 0, reinterpret_cast<sockaddr*>(&to), sizeof to) >= 0) return 0;
    // USERSOCK has no kernel socket: after the multicast is delivered, the unicast to port 0
    // fails with ECONNREFUSED. The multicast has gone out, so this is success.
    if (errno == ECONNREFUSED) return 0;
    if (errno != EINTR) return errno;
  }
}

}  // namespace ovnpsample
