// The group filter in the kernel: attached with SO_ATTACH_FILTER to a NETLINK_USERSOCK socket in a
// private network namespace, fed random datagrams for random group sets. For every datagram the
// kernel's verdict (it reached the socket or not) must equal the verdict of the cBPF interpreter
// the unit tests and the fuzzer use (tests/cbpf.h), and satisfy the userspace rule
// (tests/filter_oracle.h). Usage: group_filter_kernel_test [SEED]
#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../tests/cbpf.h"
#include "../tests/filter_oracle.h"
#include "../tests/fixtures.h"
#include "../tests/random_datagrams.h"
#include "private_netns.h"
#include "socket/group_filter.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

namespace {

using namespace ovnpsample;
using namespace ovnpsample::testing;

constexpr uint32_t kGroup = 1;
constexpr int kGroupSets = 400;
constexpr int kDatagramsPerSet = 250;

int netlink_socket(bool join) {
  const int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_USERSOCK);
  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) return -1;
  if (join && setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &kGroup, sizeof kGroup) != 0) return -1;
  return fd;
}

}  // namespace

int main(int argc, char** argv) {
  if (const int status = enter_private_netns("group_filter_kernel_test")) return status;
  const uint64_t seed = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : 0x6b65726e656cull;
  const int receiver = netlink_socket(true);
  const int sender = netlink_socket(false);
  if (receiver < 0 || sender < 0) {
    std::fprintf(stderr, "cannot open NETLINK_USERSOCK sockets: %s\n", std::strerror(errno));
    return 1;
  }
  sockaddr_nl to_group{};
  to_group.nl_family = AF_NETLINK;
  to_group.nl_groups = 1u << (kGroup - 1);
  std::vector<uint8_t> buffer(1 << 16);

  Random r(seed);
  int sent = 0;
  int kept = 0;
  int disagreements = 0;
  for (int set = 0; set < kGroupSets && disagreements < 5; set++) {
    const uint16_t family = r.one_in(4) ? static_cast<uint16_t>(0x11 + r.below(0xffee)) : kPsampleFamily;
    const std::vector<uint32_t> groups = random_groups(r);
    std::vector<sock_filter> program = build_group_filter(family, groups);
    sock_fprog fprog{static_cast<unsigned short>(program.size()), program.data()};
    if (setsockopt(receiver, SOL_SOCKET, SO_ATTACH_FILTER, &fprog, sizeof fprog) != 0) {
      std::fprintf(stderr, "the kernel refused the filter for %zu groups: %s\n", groups.size(), std::strerror(errno));
      return 1;
    }
    for (int i = 0; i < kDatagramsPerSet; i++) {
      const std::vector<uint8_t> d = random_datagram(r, family, groups);
      if (d.empty()) continue;  // netlink refuses to send nothing (ENODATA)
      // USERSOCK has no kernel socket at port 0: the multicast is delivered, then the unicast half
      // of the same sendto fails with ECONNREFUSED.
      if (sendto(sender, d.data(), d.size(), 0, reinterpret_cast<sockaddr*>(&to_group), sizeof to_group) < 0 &&
          errno != ECONNREFUSED) {
        std::fprintf(stderr, "sendto of %zu bytes: %s\n", d.size(), std::strerror(errno));
        return 1;
      }
      // Multicast delivery happens inside sendto: the datagram is in the queue now, or never.
      const ssize_t n = recv(receiver, buffer.data(), buffer.size(), MSG_DONTWAIT | MSG_TRUNC);
      if (n < 0 && errno != EAGAIN) {
        std::fprintf(stderr, "recv: %s\n", std::strerror(errno));
        return 1;
      }
      sent++;
      const bool in_kernel = n >= 0;
      const bool interpreted = cbpf::run(program, d.data(), static_cast<uint32_t>(d.size())) != 0;
      kept += in_kernel;
      std::string wrong;
      if (in_kernel && static_cast<size_t>(n) != d.size())
        wrong = "the kernel kept " + std::to_string(n) + " bytes of it";
      if (in_kernel != interpreted)
        wrong = std::string("the kernel ") + (in_kernel ? "kept" : "dropped") + " it, the interpreter did not";
      if (const auto rule = judge_filter_verdict(in_kernel, d.data(), d.size(), family, groups)) wrong = *rule;
      if (wrong.empty()) continue;
      disagreements++;
      std::fprintf(stderr, "seed %#llx, set %d, family %u, %zu groups (first %u): %s\n  %s\n",
                   static_cast<unsigned long long>(seed), set, family, groups.size(), groups[0], wrong.c_str(),
                   encode_hex(d.data(), d.size()).c_str());
    }
  }
  if (disagreements > 0) return 1;
  std::printf(
      "group filter in the kernel: %d datagrams over %d group sets, %d kept; every verdict equals the "
      "interpreter's and satisfies the userspace rule\n",
      sent, kGroupSets, kept);
  return 0;
}
