// libFuzzer target for the classic-BPF group filter: the input is a set of wanted groups and a
// datagram. The filter program runs in a cBPF interpreter with the kernel's semantics
// (tests/cbpf.h; group_filter_kernel_test checks it against the kernel), and its verdict is
// judged by the userspace rule (tests/filter_oracle.h): a trap when it would drop something
// userspace delivers, or keep a well-formed message of an unwanted group.
//
// Input: byte 0 = number of groups - 1 (modulo kMaxFilterGroups), then the groups as host-order
// u32, then the datagram.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../tests/cbpf.h"
#include "../tests/filter_oracle.h"
#include "../tests/netlink_builder.h"
#include "socket/group_filter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t count = 1 + data[0] % ovnpsample::kMaxFilterGroups;
  if (size < 1 + 4 * count) return 0;
  std::vector<uint32_t> groups(count);
  std::memcpy(groups.data(), data + 1, 4 * count);
  const uint8_t* datagram = data + 1 + 4 * count;
  const size_t length = size - 1 - 4 * count;

  const uint16_t family = ovnpsample::testing::kPsampleFamily;
  const auto program = ovnpsample::build_group_filter(family, groups);
  if (ovnpsample::testing::cbpf::check(program)) __builtin_trap();
  const bool kept = ovnpsample::testing::cbpf::run(program, datagram, static_cast<uint32_t>(length)) != 0;
  if (const auto wrong = ovnpsample::testing::judge_filter_verdict(kept, datagram, length, family, groups)) {
    std::fprintf(stderr, "group filter: %s\n", wrong->c_str());
    __builtin_trap();
  }
  return 0;
}
