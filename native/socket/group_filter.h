// Classic-BPF socket filter that keeps only samples of chosen psample groups, so samples of
// other groups are dropped in the kernel before they cost a copy to userspace; and the rule it
// enforces, as userspace applies it to each message it parsed. Pure: no system calls.
#pragma once

#include <linux/filter.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ovnpsample {

// Classic BPF jump offsets are 8 bits: one comparison per group must stay reachable.
constexpr size_t kMaxFilterGroups = 200;

// The filter drops a datagram only when it is exactly one psample message of `family_id` (a
// known command, one SAMPLE_GROUP attribute of at least four bytes) whose group is not in
// `groups`: what the kernel's psample sends, one message per datagram. Everything else passes
// for userspace to judge and count: other families (the controller's notifications), netlink
// errors, several messages in one datagram, and messages userspace will find malformed for want
// of a readable group. A message whose group is unwanted is dropped even if some other
// attribute of it is garbled: the filter cannot walk every attribute, and the message was not
// wanted either way. groups must hold 1 to kMaxFilterGroups ids.
std::vector<sock_filter> build_group_filter(uint16_t family_id, const std::vector<uint32_t>& groups);

// The same rule in userspace, for a sample or group event parsed from a datagram the filter let
// through (or from any datagram when the filter could not be attached): empty `groups` keeps all.
bool group_wanted(const std::vector<uint32_t>& groups, uint32_t group);

}  // namespace ovnpsample
