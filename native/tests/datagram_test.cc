#include <cerrno>
#include <cstring>

#include "check.h"
#include "netlink_builder.h"
#include "parse_exact.h"

namespace ovnpsample::testing {
namespace {

constexpr uint16_t kNlmsgNoop = 1;
constexpr uint16_t kNlmsgError = 2;
constexpr uint16_t kNlmsgDone = 3;
constexpr uint16_t kNlmsgOverrun = 4;
constexpr uint16_t kNlmFMulti = 2;
constexpr uint16_t kNlctrlFamily = 0x10;

void add_sample(NetlinkBuilder& b, uint32_t group, uint16_t type = kPsampleFamily) {
  b.begin_message(type).genl(kCmdSample).attr_host<uint32_t>(kAttrSampleGroup, group).end_message();
}

// struct nlmsgerr: the errno, then the header of the request it answers.
void add_error(NetlinkBuilder& b, int32_t error, uint32_t seq) {
  b.begin_message(kNlmsgError, 0, seq).raw_host(error);
  b.raw_host<uint32_t>(20).raw_host(kNlctrlFamily).raw_host<uint16_t>(5).raw_host(seq).raw_host<uint32_t>(0);
  b.end_message();
}

TEST_CASE("several messages in one datagram each decode, in order") {
  NetlinkBuilder b;
  add_sample(b, 1);
  b.begin_message(kPsampleFamily, kNlmFMulti, 5, 0).genl(kCmdNewGroup).attr_host<uint32_t>(kAttrSampleGroup, 2);
  b.attr(kAttrData, {1, 2, 3}).end_message();
  add_sample(b, 3);
  const Parsed parsed = parse_exact(b.bytes());
  if (!CHECK_EQ(parsed.messages.size(), 3u)) return;
  CHECK_EQ(parsed.messages[0].group, 1u);
  CHECK(parsed.messages[1].kind == MessageKind::kGroup);
  CHECK_EQ(parsed.messages[1].nlmsg_flags, kNlmFMulti);
  CHECK_EQ(parsed.messages[1].nlmsg_seq, 5u);
  CHECK_EQ(parsed.messages[2].group, 3u);
  CHECK_EQ(parsed.samples(), 2u);
  CHECK_EQ(parsed.returned, 3u);
}

TEST_CASE("NLMSG_ERROR, NLMSG_DONE and NLMSG_OVERRUN become their kinds and NLMSG_NOOP is skipped") {
  NetlinkBuilder b;
  add_error(b, 0, 11);
  add_error(b, -EPERM, 12);
  b.begin_message(kNlmsgNoop).end_message();
  b.begin_message(kNlmsgDone, kNlmFMulti, 13).raw({0, 0, 0, 0}).end_message();
  b.begin_message(kNlmsgOverrun).end_message();
  const Parsed parsed = parse_exact(b.bytes());
  if (!CHECK_EQ(parsed.messages.size(), 4u)) return;
  CHECK(parsed.messages[0].kind == MessageKind::kError);
  CHECK_EQ(parsed.messages[0].error, 0);
  CHECK_EQ(parsed.messages[0].nlmsg_seq, 11u);
  CHECK(parsed.messages[1].kind == MessageKind::kError);
  CHECK_EQ(parsed.messages[1].error, -EPERM);
  CHECK(parsed.messages[2].kind == MessageKind::kDone);
  CHECK_EQ(parsed.messages[2].nlmsg_seq, 13u);
  CHECK(parsed.messages[3].kind == MessageKind::kOverrun);
  CHECK_EQ(parsed.samples(), 0u);
  CHECK_EQ(parsed.counters[kMalformed], 0u);
  CHECK_EQ(parsed.counters[kForeign], 0u);
}

TEST_CASE("an NLMSG_ERROR too short for struct nlmsgerr is malformed") {
  NetlinkBuilder b;
  b.begin_message(kNlmsgError).raw({0, 0, 0, 0}).end_message();
  add_sample(b, 4);
  const Parsed parsed = parse_exact(b.bytes());
  CHECK_EQ(parsed.counters[kMalformed], 1u);
  CHECK_EQ(parsed.messages.size(), 1u);
}

TEST_CASE("messages of another family are counted as foreign and skipped") {
  NetlinkBuilder b;
  add_sample(b, 1, kPsampleFamily + 1);
  add_sample(b, 2);
  add_sample(b, 3, 0x7fff);
  const Parsed filtered = parse_exact(b.bytes(), kPsampleFamily);
  if (!CHECK_EQ(filtered.messages.size(), 1u)) return;
  CHECK_EQ(filtered.messages[0].group, 2u);
  CHECK_EQ(filtered.counters[kForeign], 2u);

  const Parsed offline = parse_exact(b.bytes(), 0);
  CHECK_EQ(offline.messages.size(), 3u);
  CHECK_EQ(offline.counters[kForeign], 0u);
}

TEST_CASE("generic-netlink controller messages are handed over whole, whatever the family filter") {
  NetlinkBuilder b;
  add_sample(b, 1);
  const size_t controller_at = b.size();
  b.begin_message(kNlctrlFamily).genl(2 /* CTRL_CMD_DELFAMILY */, 2);
  b.attr_host<uint16_t>(1 /* CTRL_ATTR_FAMILY_ID */, kPsampleFamily).attr(2 /* CTRL_ATTR_FAMILY_NAME */, "psample", 8);
  b.end_message();
  for (const uint16_t family : {kPsampleFamily, uint16_t{0}}) {
    const Parsed parsed = parse_exact(b.bytes(), family);
    if (!CHECK_EQ(parsed.messages.size(), 2u)) continue;
    const Message& controller = parsed.messages[1];
    CHECK(controller.kind == MessageKind::kController);
    CHECK_EQ(controller.whole.offset, controller_at);
    CHECK_EQ(controller.whole.length, b.size() - controller_at);
    CHECK_EQ(parsed.messages[0].whole.offset, 0u);
    CHECK_EQ(parsed.messages[0].whole.length, controller_at);
    CHECK_EQ(parsed.counters[kForeign], 0u);
  }
}

TEST_CASE("reserved netlink control types are foreign to every family") {
  NetlinkBuilder b;
  b.begin_message(5).raw({1, 2, 3, 4}).end_message();
  add_sample(b, 6);
  const Parsed parsed = parse_exact(b.bytes(), 0);
  CHECK_EQ(parsed.counters[kForeign], 1u);
  if (!CHECK_EQ(parsed.messages.size(), 1u)) return;
  CHECK_EQ(parsed.messages[0].group, 6u);
}

TEST_CASE("a malformed message is counted and the next one still decodes") {
  NetlinkBuilder b;
  b.begin_message(kPsampleFamily).genl(kCmdSample).attr_host<uint16_t>(kAttrIifindex, 1).end_message();
  b.begin_message(kPsampleFamily).genl(9).attr_host<uint32_t>(kAttrSampleGroup, 1).end_message();
  b.begin_message(kPsampleFamily).raw({0, 1}).end_message(false);
  add_sample(b, 8);
  const Parsed parsed = parse_exact(b.bytes());
  CHECK_EQ(parsed.counters[kMalformed], 3u);
  if (!CHECK_EQ(parsed.messages.size(), 1u)) return;
  CHECK_EQ(parsed.messages[0].group, 8u);
}

TEST_CASE("an untrustworthy header ends the datagram with one malformed count") {
  for (const uint32_t bad_length : {0u, 15u, 1000u, 0xffffffffu}) {
    NetlinkBuilder b;
    add_sample(b, 1);
    const size_t second = b.size();
    add_sample(b, 2);
    add_sample(b, 3);
    std::vector<uint8_t> bytes = b.bytes();
    std::memcpy(&bytes[second], &bad_length, sizeof bad_length);
    const Parsed parsed = parse_exact(bytes);
    CHECK_EQ(parsed.counters[kMalformed], 1u);
    if (!CHECK_EQ(parsed.messages.size(), 1u)) continue;
    CHECK_EQ(parsed.messages[0].group, 1u);
  }
}

TEST_CASE("trailing bytes too short for a header are one malformed count") {
  NetlinkBuilder b;
  add_sample(b, 1);
  b.raw({1, 2, 3, 4, 5, 6, 7, 8});
  const Parsed parsed = parse_exact(b.bytes());
  CHECK_EQ(parsed.messages.size(), 1u);
  CHECK_EQ(parsed.counters[kMalformed], 1u);
}

TEST_CASE("an empty datagram yields nothing and counts nothing") {
  const Parsed parsed = parse_exact(nullptr, 0);
  CHECK_EQ(parsed.messages.size(), 0u);
  CHECK_EQ(parsed.counters[kMalformed], 0u);
}

}  // namespace
}  // namespace ovnpsample::testing
