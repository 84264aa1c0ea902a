#include "socket/psample_socket.h"

#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>

#include "socket/group_filter.h"
#include "socket/netns.h"
#include "wire/genl_family.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

namespace ovnpsample {

namespace {

int protocol_number(SourceProtocol protocol) {
  return protocol == SourceProtocol::kUsersock ? NETLINK_USERSOCK : NETLINK_GENERIC;
}

// Asks the generic-netlink controller about `family` (before any group is joined, the reply is
// the only message the socket can receive). Returns 0 or a positive errno (ENOENT: no such family).
int query_family(int fd, const std::string& family, uint32_t seq, FamilyInfo& info) {
  const auto request = build_get_family_request(family, seq);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (sendto(fd, request.data(), request.size(), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0)
    return errno;
  std::vector<uint8_t> reply(16384);
  for (;;) {
    sockaddr_nl sender{};
    socklen_t sender_len = sizeof sender;
    ssize_t n = recvfrom(fd, reply.data(), reply.size(), 0, reinterpret_cast<sockaddr*>(&sender), &sender_len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    // Any process with CAP_NET_ADMIN in the namespace may unicast to this port: only the
    // kernel's answer is believed (kernel_tests/forged_reply_test.cc).
    if (sender.nl_pid != 0) continue;
    return parse_get_family_reply(reply.data(), static_cast<size_t>(n), info);
  }
}

SetupError resolve_psample_family(int fd, FamilyInfo& info) {
  const int err = query_family(fd, "psample", 1, info);
  if (err == ENOENT)
    return setup_error("PSAMPLE_UNAVAILABLE",
                       "psample family not found: load the psample module (modprobe psample; kernel >= 4.11) "
                       "in the network namespace's kernel, or use the `source` option to read injected samples",
                       err);
  if (err == EBADMSG)
    return setup_error("PSAMPLE_UNAVAILABLE", describe_errno("unexpected generic netlink controller reply", err), err);
  if (err != 0)
    return setup_error("PSAMPLE_UNAVAILABLE", describe_errno("cannot query the generic netlink controller", err), err);
  return {};
}

SetupError join_group(int fd, uint32_t group, const char* name, bool usersock) {
  if (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof group) == 0) return {};
  int err = errno;
  if (err == EPERM || err == EACCES)
    return setup_error("PSAMPLE_PERMISSION",
                       std::string("joining the '") + name +
                           "' multicast group needs CAP_NET_ADMIN, which this process does not have: run as root, "
                           "or grant only that capability (systemd AmbientCapabilities=CAP_NET_ADMIN, setcap "
                           "cap_net_admin+ep on the node binary, Kubernetes securityContext.capabilities.add: "
                           "[NET_ADMIN])",
                       err);
  return setup_error(usersock ? "INVALID_OPTION" : "SOCKET_ERROR",
                     describe_errno(std::string("cannot join multicast group ") + std::to_string(group), err) +
                         (usersock ? ": NETLINK_USERSOCK has groups 1-32" : ""),
                     err);
}

void set_receive_buffer(int fd, int bytes, OpenedSocket& out) {
  // FORCE bypasses net.core.rmem_max (needs CAP_NET_ADMIN); plain SO_RCVBUF is capped by it.
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) != 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
  socklen_t len = sizeof out.receive_buffer_bytes;
  getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &out.receive_buffer_bytes, &len);
}

bool attach_group_filter(int fd, uint16_t family_id, const std::vector<uint32_t>& groups) {
  if (groups.size() > kMaxFilterGroups) return false;  // userspace filters instead
  auto program = build_group_filter(family_id, groups);
  sock_fprog fprog{static_cast<unsigned short>(program.size()), program.data()};
  return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fprog, sizeof fprog) == 0;
}

SetupError configure(int fd, const SocketOptions& options, OpenedSocket& out) {
  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  if (bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0)
    return setup_error("SOCKET_ERROR", describe_errno("cannot bind the netlink socket", errno), errno);

  if (options.protocol == SourceProtocol::kKernelPsample) {
    FamilyInfo family;
    if (auto err = resolve_psample_family(fd, family); err.failed()) return err;
    out.family_id = family.id;
    out.packets_group = family.group_id("packets");
    out.config_group = family.group_id("config");
    if (out.packets_group == 0)
      return setup_error("PSAMPLE_UNAVAILABLE", "the psample family has no 'packets' multicast group");
    // Without it, a psample module reload would leave the socket deaf without a word.
    FamilyInfo controller;
    if (int err = query_family(fd, "nlctrl", 2, controller); err != 0)
      return setup_error("SOCKET_ERROR",
                         describe_errno("cannot query the generic netlink controller's own family", err), err);
    out.controller_group = controller.group_id("notify");
  } else {
    out.family_id = options.family_id;
    out.packets_group = options.group_id;
  }

  set_receive_buffer(fd, options.receive_buffer_bytes, out);
  int one = 1;
  // Without this the kernel marks the socket congested on the first overrun and drops every
  // message until the queue is empty; drops are counted exactly by SK_MEMINFO_DROPS either way.
  // Should a kernel refuse it, ENOBUFS reports reach the reader, which counts them.
  (void)setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof one);
  if (options.listen_all_nsid && setsockopt(fd, SOL_NETLINK, NETLINK_LISTEN_ALL_NSID, &one, sizeof one) != 0)
    return setup_error("INVALID_OPTION",
                       describe_errno("listenAllNsid: NETLINK_LISTEN_ALL_NSID failed", errno) +
                           " (needs kernel >= 4.6 and CAP_NET_BROADCAST in the peer namespaces)",
                       errno);
  // The filter goes on before joining so no unwanted sample is queued in between.
  out.kernel_filter = options.groups.empty() || attach_group_filter(fd, out.family_id, options.groups);

  const bool usersock = options.protocol == SourceProtocol::kUsersock;
  if (out.controller_group != 0)
    if (auto err = join_group(fd, out.controller_group, "notify", usersock); err.failed()) return err;
  if (auto err = join_group(fd, out.packets_group, "packets", usersock); err.failed()) return err;
  if (options.config_events) {
    if (out.config_group == 0 && options.protocol == SourceProtocol::kKernelPsample)
      return setup_error("INVALID_OPTION", "config: the psample family has no 'config' multicast group");
    if (out.config_group != 0)
      if (auto err = join_group(fd, out.config_group, "config", usersock); err.failed()) return err;
  } else {
    out.config_group = 0;
  }
  return {};
}

}  // namespace

SetupError open_psample_socket(const SocketOptions& options, OpenedSocket& out) {
  if (auto err = enter_netns(options.netns); err.failed()) return err;
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol_number(options.protocol));
  if (fd < 0) return setup_error("SOCKET_ERROR", describe_errno("cannot open a netlink socket", errno), errno);
  if (auto err = configure(fd, options, out); err.failed()) {
    close(fd);
    return err;
  }
  out.fd = fd;
  return {};
}

int follow_psample_family(const SocketOptions& options, const FamilyInfo& family, OpenedSocket& socket) {
  const uint32_t packets = family.group_id("packets");
  const uint32_t config = options.config_events ? family.group_id("config") : 0;
  if (packets == 0 || (options.config_events && config == 0)) return ENOENT;
  // The filter goes first, so nothing unwanted is queued between the join and the filter.
  if (!options.groups.empty() && socket.kernel_filter)
    socket.kernel_filter = attach_group_filter(socket.fd, family.id, options.groups);
  // The kernel dropped the old memberships with the old family; an injection source has no
  // kernel to do it, and a group whose id did not change is simply joined again.
  const std::pair<uint32_t, uint32_t> moves[] = {{socket.packets_group, packets}, {socket.config_group, config}};
  for (const auto& [old_group, new_group] : moves) {
    if (old_group != 0 && old_group != new_group)
      (void)setsockopt(socket.fd, SOL_NETLINK, NETLINK_DROP_MEMBERSHIP, &old_group, sizeof old_group);
    if (new_group != 0 && setsockopt(socket.fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &new_group, sizeof new_group) != 0)
      return errno;
  }
  socket.family_id = family.id;
  socket.packets_group = packets;
  socket.config_group = config;
  return 0;
}

int lookup_psample_family(FamilyInfo& family) {
  const int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
  if (fd < 0) return errno;
  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  const int err =
      bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0 ? errno : query_family(fd, "psample", 1, family);
  close(fd);
  return err;
}

bool in_packets_group(const OpenedSocket& socket) {
  if (socket.packets_group == 0) return false;
  // NETLINK_LIST_MEMBERSHIPS: bit (group - 1) of an array of u32, as long as the buffer allows.
  std::vector<uint32_t> bits(socket.packets_group / 32 + 1, 0);
  auto length = static_cast<socklen_t>(bits.size() * sizeof(uint32_t));
  if (getsockopt(socket.fd, SOL_NETLINK, NETLINK_LIST_MEMBERSHIPS, bits.data(), &length) != 0) return false;
  const uint32_t bit = socket.packets_group - 1;
  return (bits[bit / 32] >> (bit % 32) & 1) != 0;
}

void leave_groups(const OpenedSocket& socket) {
  for (const uint32_t group : {socket.controller_group, socket.packets_group, socket.config_group})
    if (group != 0) (void)setsockopt(socket.fd, SOL_NETLINK, NETLINK_DROP_MEMBERSHIP, &group, sizeof group);
}

int64_t socket_drops(int fd) {
  uint32_t meminfo[SK_MEMINFO_VARS] = {};
  socklen_t len = sizeof meminfo;
  if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, meminfo, &len) != 0 || len <= SK_MEMINFO_DROPS * sizeof(uint32_t))
    return -1;
  return meminfo[SK_MEMINFO_DROPS];
}

}  // namespace ovnpsample
