// Opening the netlink socket samples are read from (kernel psample family or an injection
// source), following the psample family when it registers again, and leaving it at close.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "socket/setup_error.h"
#include "wire/genl_family.h"

namespace ovnpsample {

enum class SourceProtocol { kKernelPsample, kGeneric, kUsersock };

struct SocketOptions {
  std::string netns;
  SourceProtocol protocol = SourceProtocol::kKernelPsample;
  uint16_t family_id = 0;        // injection sources: the nlmsg_type messages carry
  uint32_t group_id = 0;         // injection sources: the multicast group to join
  std::vector<uint32_t> groups;  // psample SAMPLE_GROUP ids to keep; empty = all
  bool config_events = false;
  bool listen_all_nsid = false;
  int receive_buffer_bytes = 32 << 20;
};

struct OpenedSocket {
  int fd = -1;
  uint16_t family_id = 0;
  uint32_t packets_group = 0;
  uint32_t config_group = 0;      // joined only with config_events
  uint32_t controller_group = 0;  // nlctrl's "notify": psample's (un)registrations; kernel source only
  bool kernel_filter = false;     // the group filter runs in the kernel (else userspace must apply it)
  int receive_buffer_bytes = 0;   // as the kernel reports it (SO_RCVBUF)
};

// Must run on the thread that will own the socket's namespace (it may call setns).
SetupError open_psample_socket(const SocketOptions& options, OpenedSocket& out);

// Subscribes the socket to `family`, the psample family registered again (module reloaded): the
// kernel dropped the memberships of the old one, and the family id and group ids may have
// changed. Updates `socket`; returns 0 or the errno of the failed step.
int follow_psample_family(const SocketOptions& options, const FamilyInfo& family, OpenedSocket& socket);

// Asks the kernel, on a socket of its own, what the psample family is now (in the calling
// thread's network namespace). Returns 0, ENOENT when it is not registered, or another errno.
int lookup_psample_family(FamilyInfo& family);

// Whether the socket is still in its packets group (the kernel drops it with the family).
bool in_packets_group(const OpenedSocket& socket);

// Leaves every multicast group, so nothing more is queued on the socket (close).
void leave_groups(const OpenedSocket& socket);

// Messages the kernel dropped for this socket (SK_MEMINFO_DROPS), or -1 if unknown.
int64_t socket_drops(int fd);

}  // namespace ovnpsample
