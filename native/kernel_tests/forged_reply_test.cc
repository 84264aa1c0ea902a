// A process with CAP_NET_ADMIN in the socket's network namespace (a pod's root, when the socket is
// opened in the pod's namespace) can unicast to the socket's netlink port while it waits for the
// controller's answer about psample. Only the kernel's answer may be believed: here a forger
// floods the port the socket is about to get with a reply claiming psample exists, and opening
// must still fail with the kernel's own ENOENT (this machine has no psample), every time.
// Needs root for a private network namespace (exits 77 otherwise).
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "../tests/netlink_builder.h"
#include "private_netns.h"
#include "socket/psample_socket.h"

namespace {

using namespace ovnpsample;

constexpr int kAttempts = 3000;

std::vector<uint8_t> forged_psample_reply() {
  testing::NetlinkBuilder b;
  b.begin_message(GENL_ID_CTRL, 0, 1).genl(CTRL_CMD_NEWFAMILY, 2);
  b.attr(CTRL_ATTR_FAMILY_NAME, "psample", 8).attr_host<uint16_t>(CTRL_ATTR_FAMILY_ID, 0x7777);
  b.begin_nest(CTRL_ATTR_MCAST_GROUPS);
  b.begin_nest(1)
      .attr_host<uint32_t>(CTRL_ATTR_MCAST_GRP_ID, 3)
      .attr(CTRL_ATTR_MCAST_GRP_NAME, "packets", 8)
      .end_nest();
  b.end_nest().end_message();
  return b.bytes();
}

}  // namespace

int main() {
  if (const int status = testing::enter_private_netns("forged_reply_test")) return status;
  if (access("/sys/module/psample", F_OK) == 0) {
    std::printf("forged_reply_test skipped: this kernel has psample, so opening would succeed anyway\n");
    return testing::kSkipped;
  }
  // The forger's own socket takes an explicit port, leaving the process id (the port netlink
  // gives a process's first autobound socket) to the socket under test.
  const int forger = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
  sockaddr_nl self{};
  self.nl_family = AF_NETLINK;
  self.nl_pid = 0x7fff0001;
  if (forger < 0 || bind(forger, reinterpret_cast<sockaddr*>(&self), sizeof self) != 0) {
    std::perror("forger socket");
    return 1;
  }
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> delivered{0};
  std::thread flood([&] {
    const std::vector<uint8_t> reply = forged_psample_reply();
    sockaddr_nl victim{};
    victim.nl_family = AF_NETLINK;
    victim.nl_pid = static_cast<uint32_t>(getpid());
    while (!stop) {
      if (sendto(forger, reply.data(), reply.size(), 0, reinterpret_cast<sockaddr*>(&victim), sizeof victim) >= 0)
        delivered++;
    }
  });
  int believed = 0;
  for (int i = 0; i < kAttempts; i++) {
    SocketOptions options;  // the kernel's psample family
    OpenedSocket opened;
    const SetupError error = open_psample_socket(options, opened);
    if (!error.failed()) {
      believed++;
      close(opened.fd);
    }
  }
  stop = true;
  flood.join();
  std::printf("forged_reply_test: %d of %d opens believed a forged reply; %llu forged replies reached the socket\n",
              believed, kAttempts, static_cast<unsigned long long>(delivered.load()));
  return believed == 0 && delivered > 0 ? 0 : 1;
}
