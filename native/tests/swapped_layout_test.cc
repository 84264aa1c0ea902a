#include "check.h"
#include "netlink_builder.h"
#include "parse_exact.h"

namespace ovnpsample::testing {
namespace {

// Unfixed 5.8-5.11 kernels emitted the tunnel as attribute 7 and the refcount as attribute 8.
constexpr uint16_t kOldTunnel = 7;
constexpr uint16_t kOldGroupRefcount = 8;

TEST_CASE("a 5.8-5.11 sample carrying its tunnel as attribute 7 is recognised") {
  NetlinkBuilder b;
  b.begin_message(kPsampleFamily).genl(kCmdSample).attr_host<uint32_t>(kAttrSampleGroup, 3);
  b.begin_nest(kOldTunnel).attr_big_endian<uint64_t>(kTunId, 5001).attr_host<uint8_t>(kTunTtl, 64).end_nest();
  b.attr(kAttrData, {1, 2, 3}).end_message();
  const Parsed parsed = parse_exact(b.bytes());
  if (!CHECK_EQ(parsed.messages.size(), 1u)) return;
  const Message& m = parsed.messages[0];
  CHECK(m.swapped_layout);
  CHECK_EQ(parsed.counters[kSwappedLayout], 1u);
  CHECK(m.present & (1u << kAttrTunnel));
  CHECK(!(m.present & (1u << kAttrGroupRefcount)));
  CHECK_EQ(m.tunnel.id, 5001u);
  CHECK_EQ(m.tunnel.ttl, 64);
  CHECK_EQ(m.group_refcount, 0u);
}

TEST_CASE("a 5.8-5.11 group message carrying its refcount as attribute 8 is recognised") {
  NetlinkBuilder b;
  b.begin_message(kPsampleFamily).genl(kCmdNewGroup).attr_host<uint32_t>(kAttrSampleGroup, 3);
  b.attr_host<uint32_t>(kOldGroupRefcount, 6).end_message();
  const Parsed parsed = parse_exact(b.bytes());
  if (!CHECK_EQ(parsed.messages.size(), 1u)) return;
  const Message& m = parsed.messages[0];
  CHECK(m.swapped_layout);
  CHECK_EQ(parsed.counters[kSwappedLayout], 1u);
  CHECK_EQ(m.group_refcount, 6u);
  CHECK_EQ(m.present, (1u << kAttrSampleGroup) | (1u << kAttrGroupRefcount));
}

TEST_CASE("the fixed layout is not mistaken for the swapped one") {
  NetlinkBuilder b;
  b.begin_message(kPsampleFamily).genl(kCmdDelGroup).attr_host<uint32_t>(kAttrSampleGroup, 3);
  b.attr_host<uint32_t>(kAttrGroupRefcount, 0).end_message();
  b.begin_message(kPsampleFamily).genl(kCmdSample).attr_host<uint32_t>(kAttrSampleGroup, 3);
  b.begin_nest(kAttrTunnel).attr_host<uint8_t>(kTunTtl, 1).end_nest().end_message();
  // A tunnel nest that happens to be 4 bytes long in a sample message is still attribute 8's tunnel.
  b.begin_message(kPsampleFamily).genl(kCmdSample).attr_host<uint32_t>(kAttrSampleGroup, 3);
  b.begin_nest(kAttrTunnel).flag(kTunOam).end_nest().end_message();
  const Parsed parsed = parse_exact(b.bytes());
  if (!CHECK_EQ(parsed.messages.size(), 3u)) return;
  CHECK_EQ(parsed.counters[kSwappedLayout], 0u);
  CHECK(parsed.messages[0].present & (1u << kAttrGroupRefcount));
  CHECK_EQ(parsed.messages[1].tunnel.ttl, 1);
  CHECK_EQ(parsed.messages[2].tunnel.present, 1u << kTunOam);
}

TEST_CASE("attribute 7 that is not an exact nest stays a refcount") {
  NetlinkBuilder b;
  b.begin_message(kPsampleFamily).genl(kCmdGetGroup).attr_host<uint32_t>(kAttrSampleGroup, 3);
  b.attr(kAttrGroupRefcount, {0x09, 0x00, 0x00, 0x00, 0x00, 0x00}).end_message();
  const Parsed parsed = parse_exact(b.bytes());
  if (!CHECK_EQ(parsed.messages.size(), 1u)) return;
  CHECK(!parsed.messages[0].swapped_layout);
  CHECK_EQ(parsed.messages[0].group_refcount, 9u);
}

}  // namespace
}  // namespace ovnpsample::testing
