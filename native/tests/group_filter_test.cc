// The classic-BPF group filter, run by a cBPF interpreter with the kernel's semantics (cbpf.h) and
// judged by the userspace rule (filter_oracle.h). group_filter_kernel_test runs the same program
// in the kernel.
#include <linux/genetlink.h>

#include <cstdio>
#include <string>

#include "cbpf.h"
#include "check.h"
#include "filter_oracle.h"
#include "fixtures.h"
#include "netlink_builder.h"
#include "parse_exact.h"
#include "random_datagrams.h"
#include "socket/group_filter.h"

namespace ovnpsample::testing {
namespace {

bool kept_by(const std::vector<sock_filter>& program, const std::vector<uint8_t>& datagram) {
  return cbpf::run(program, datagram.data(), static_cast<uint32_t>(datagram.size())) != 0;
}

std::vector<uint8_t> sample_of_group(uint32_t group, uint16_t family = kPsampleFamily) {
  NetlinkBuilder b;
  b.begin_message(family)
      .genl(kCmdSample)
      .attr_host<uint16_t>(kAttrIifindex, 2)
      .attr_host<uint32_t>(kAttrSampleGroup, group);
  b.attr(kAttrData, {1, 2, 3, 4, 5}).end_message();
  return b.bytes();
}

TEST_CASE("filter: the program for 1 and for 200 groups is one the kernel takes, every jump in range") {
  for (const size_t count : {size_t{1}, kMaxFilterGroups}) {
    std::vector<uint32_t> groups(count);
    for (size_t i = 0; i < count; i++) groups[i] = static_cast<uint32_t>(i * 7919);
    const auto program = build_group_filter(kPsampleFamily, groups);
    const std::optional<std::string> refused = cbpf::check(program);
    CHECK(!refused.has_value());
    if (refused) std::fprintf(stderr, "%zu groups: %s\n", count, refused->c_str());
    // The last group is still reachable: its sample is kept.
    CHECK(kept_by(program, sample_of_group(groups.back())));
    CHECK(!kept_by(program, sample_of_group(1)));
  }
}

TEST_CASE("filter: each real capture is kept exactly when its group is wanted") {
  for (const std::string& name : fixture_names()) {
    const std::optional<Fixture> fixture = load_fixture(name);
    if (!CHECK(fixture.has_value())) continue;
    const Parsed parsed = parse_exact(fixture->bytes);
    if (!CHECK_EQ(parsed.messages.size(), 1u)) continue;
    const uint32_t group = parsed.messages[0].group;
    CHECK(kept_by(build_group_filter(kPsampleFamily, {group + 1, group}), fixture->bytes));
    CHECK(!kept_by(build_group_filter(kPsampleFamily, {group + 1}), fixture->bytes));
    CHECK(kept_by(build_group_filter(static_cast<uint16_t>(kPsampleFamily + 1), {group + 1}), fixture->bytes));
  }
}

TEST_CASE("filter: what userspace must see passes, whatever its group") {
  const std::vector<uint32_t> wanted = {7};
  struct Case {
    const char* what;
    std::vector<uint8_t> datagram;
  };
  std::vector<Case> cases;
  std::vector<uint8_t> cut = sample_of_group(8);
  cut.resize(19);
  cases.push_back({"shorter than nlmsghdr + genlmsghdr", cut});
  {
    NetlinkBuilder b;  // unwanted first, wanted second: the kernel never sends two; userspace sorts them
    b.begin_message(kPsampleFamily).genl(kCmdSample).attr_host<uint32_t>(kAttrSampleGroup, 8).end_message();
    b.begin_message(kPsampleFamily).genl(kCmdSample).attr_host<uint32_t>(kAttrSampleGroup, 7).end_message();
    cases.push_back({"two messages in one datagram", b.bytes()});
  }
  {
    NetlinkBuilder b;
    b.begin_message(0x10).genl(CTRL_CMD_NEWFAMILY).attr_host<uint32_t>(kAttrSampleGroup, 8).end_message();
    cases.push_back({"a controller notification", b.bytes()});
  }
  {
    std::vector<uint8_t> unknown_command = sample_of_group(8);
    unknown_command[16] = 9;
    cases.push_back({"an unknown command", unknown_command});
  }
  {
    NetlinkBuilder b;
    b.begin_message(kPsampleFamily).genl(kCmdSample).attr_host<uint16_t>(kAttrIifindex, 1).end_message();
    cases.push_back({"no SAMPLE_GROUP", b.bytes()});
  }
  {
    NetlinkBuilder b;
    b.begin_message(kPsampleFamily).genl(kCmdSample).attr(kAttrSampleGroup, {8, 0}).end_message();
    cases.push_back({"a SAMPLE_GROUP of two bytes, last", b.bytes()});
  }
  {
    NetlinkBuilder b;
    b.begin_message(kPsampleFamily).genl(kCmdSample).attr_host<uint32_t>(kAttrSampleGroup, 8);
    b.attr_host<uint32_t>(kAttrSampleGroup, 7).end_message();
    cases.push_back({"two SAMPLE_GROUP attributes", b.bytes()});
  }
  {
    std::vector<uint8_t> trailing = sample_of_group(8);
    trailing.insert(trailing.end(), {0, 0, 0, 0});
    cases.push_back({"bytes after the message", trailing});
  }
  for (const Case& c : cases) {
    const bool kept = kept_by(build_group_filter(kPsampleFamily, wanted), c.datagram);
    CHECK(kept);
    if (!kept) std::fprintf(stderr, "dropped: %s\n", c.what);
  }
  CHECK(!kept_by(build_group_filter(kPsampleFamily, wanted), sample_of_group(8)));
  CHECK(kept_by(build_group_filter(kPsampleFamily, wanted), sample_of_group(7)));
}

TEST_CASE("parser: a message naming two groups is malformed (the filter reads the first, nla_parse the last)") {
  NetlinkBuilder b;
  b.begin_message(kPsampleFamily).genl(kCmdSample).attr_host<uint32_t>(kAttrSampleGroup, 8);
  b.attr_host<uint32_t>(kAttrSampleGroup, 7).end_message();
  const Parsed parsed = parse_exact(b.bytes());
  CHECK_EQ(parsed.messages.size(), 0u);
  CHECK_EQ(parsed.counters[kMalformed], 1u);
}

TEST_CASE("parser: a group event without SAMPLE_GROUP is malformed, as a sample without one is") {
  for (const uint8_t cmd : {kCmdGetGroup, kCmdNewGroup, kCmdDelGroup, kCmdSample}) {
    NetlinkBuilder b;
    b.begin_message(kPsampleFamily).genl(cmd).attr_host<uint32_t>(kAttrGroupRefcount, 1).end_message();
    const Parsed parsed = parse_exact(b.bytes());
    CHECK_EQ(parsed.messages.size(), 0u);
    CHECK_EQ(parsed.counters[kMalformed], 1u);
  }
}

TEST_CASE("filter: random group sets and random datagrams get the verdicts the userspace rule allows") {
  constexpr uint64_t kSeed = 0x5eed0f11;
  constexpr int kGroupSets = 2000;
  constexpr int kDatagramsPerSet = 50;
  Random r(kSeed);
  int kept = 0;
  int failures = 0;
  for (int set = 0; set < kGroupSets && failures < 5; set++) {
    const uint16_t family = r.one_in(4) ? static_cast<uint16_t>(0x11 + r.below(0xffee)) : kPsampleFamily;
    const std::vector<uint32_t> groups = random_groups(r);
    const auto program = build_group_filter(family, groups);
    for (int i = 0; i < kDatagramsPerSet; i++) {
      const std::vector<uint8_t> d = random_datagram(r, family, groups);
      const bool verdict = kept_by(program, d);
      kept += verdict;
      const std::optional<std::string> wrong = judge_filter_verdict(verdict, d.data(), d.size(), family, groups);
      if (!wrong) continue;
      failures++;
      CHECK(!wrong.has_value());
      std::fprintf(stderr, "seed %llx, set %d, family %u, %zu groups (first %u): %s\n  %s\n",
                   static_cast<unsigned long long>(kSeed), set, family, groups.size(), groups[0], wrong->c_str(),
                   encode_hex(d.data(), d.size()).c_str());
    }
  }
  // Both verdicts occur, or the generator stopped exercising one side.
  CHECK(kept > kGroupSets * kDatagramsPerSet / 10);
  CHECK(kept < kGroupSets * kDatagramsPerSet * 9 / 10);
}

}  // namespace
}  // namespace ovnpsample::testing
