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

// groups.size() must not exceed kMaxFilterGroups.
std::vector<sock_filter> build_group_filter(const std::vector<uint32_t>& groups);

}  // namespace ovnpsample
