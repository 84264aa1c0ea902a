// Classic-BPF socket filter that keeps only samples of chosen psample groups, so samples of
// other groups are dropped in the kernel before they cost a copy to userspace.
#pragma once

#include <linux/filter.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ovnpsample {

// Classic BPF jump offsets are 8 bits: one comparison per group must stay reachable.
constexpr size_t kMaxFilterGroups = 200;

// Judges only messages of the psample family `family_id`: every other message (the
// generic-netlink controller's family notifications, netlink errors) passes for userspace to
// handle and count. groups.size() must not exceed kMaxFilterGroups.
std::vector<sock_filter> build_group_filter(uint16_t family_id, const std::vector<uint32_t>& groups);

}  // namespace ovnpsample
