#include <cstring>

#include "check.h"
#include "netlink_builder.h"
#include "parse_exact.h"

namespace ovnpsample::testing {
namespace {

std::vector<uint8_t> sample_with_every_attribute() {
  NetlinkBuilder b;
  b.begin_message(kPsampleFamily, 0x0000, 77, 4242).genl(kCmdSample, 1);
  b.attr_host<uint16_t>(kAttrIifindex, 3);
  b.attr_host<uint16_t>(kAttrOifindex, 65534);
  b.attr_host<uint32_t>(kAttrOrigsize, 1514);
  b.attr_host<uint32_t>(kAttrSampleGroup, 10);
  b.attr_host<uint32_t>(kAttrGroupSeq, 0xdeadbeef);
  b.attr_host<uint32_t>(kAttrSampleRate, 4294967295u);
  b.attr(kAttrData, {0xaa, 0xbb, 0xcc, 0xdd, 0xee});
  b.attr_host<uint32_t>(kAttrGroupRefcount, 2);
  b.begin_nest(kAttrTunnel | kNlaFNested).attr_host<uint8_t>(kTunTtl, 64).end_nest();
  b.attr(kAttrPad, {0, 0, 0, 0});
  b.attr_host<uint16_t>(kAttrOutTc, 7);
  b.attr_host<uint64_t>(kAttrOutTcOcc, 0x0102030405060708ull);
  b.attr_host<uint64_t>(kAttrLatency, 123456789012ull);
  b.attr_host<uint64_t>(kAttrTimestamp, 1795256305816711758ull);
  b.attr_host<uint16_t>(kAttrProto, 0x86dd);
  b.attr(kAttrUserCookie, {0x2b, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03, 0xf4});
  b.flag(kAttrSampleProbability);
  b.end_message();
  return b.bytes();
}

TEST_CASE("every psample attribute 0-16 decodes to its exact value") {
  const std::vector<uint8_t> bytes = sample_with_every_attribute();
  const Parsed parsed = parse_exact(bytes);
  if (!CHECK_EQ(parsed.messages.size(), 1u)) return;
  const Message& m = parsed.messages[0];
  CHECK(m.kind == MessageKind::kSample);
  CHECK_EQ(m.cmd, kCmdSample);
  CHECK_EQ(m.version, 1);
  CHECK_EQ(m.nlmsg_type, kPsampleFamily);
  CHECK_EQ(m.nlmsg_seq, 77u);
  CHECK_EQ(m.nlmsg_pid, 4242u);
  CHECK_EQ(m.present, (1u << kAttrCount) - 1);
  CHECK_EQ(m.iifindex, 3);
  CHECK_EQ(m.oifindex, 65534);
  CHECK_EQ(m.origsize, 1514u);
  CHECK_EQ(m.group, 10u);
  CHECK_EQ(m.group_seq, 0xdeadbeefu);
  CHECK_EQ(m.rate, 4294967295u);
  CHECK_EQ(m.data.length, 5u);
  CHECK_EQ(bytes[m.data.offset], 0xaa);
  CHECK_EQ(bytes[m.data.offset + 4], 0xee);
  CHECK_EQ(m.group_refcount, 2u);
  CHECK_EQ(m.tunnel.present, 1u << kTunTtl);
  CHECK_EQ(m.tunnel.ttl, 64);
  CHECK_EQ(m.out_tc, 7);
  CHECK_EQ(m.out_tc_occ, 0x0102030405060708ull);
  CHECK_EQ(m.latency, 123456789012ull);
  CHECK_EQ(m.timestamp, 1795256305816711758ull);
  CHECK_EQ(m.proto, 0x86dd);
  CHECK_EQ(m.user_cookie.length, 8u);
  CHECK_EQ(std::memcmp(&bytes[m.user_cookie.offset], "\x2b\x00\x00\x03\x00\x00\x03\xf4", 8), 0);
  CHECK(m.probability);
  CHECK(!m.swapped_layout);
  CHECK_EQ(m.unknown_attrs, 0);
  CHECK_EQ(parsed.messages.size(), 1u);
  CHECK_EQ(parsed.samples(), 1u);
  CHECK_EQ(parsed.counters[kMalformed], 0u);
  CHECK_EQ(parsed.returned, 1u);
}

TEST_CASE("a fixed-size attribute shorter than its type makes the message malformed") {
  const struct {
    uint16_t type;
    size_t width;
  } fixed[] = {{kAttrIifindex, 2}, {kAttrOifindex, 2},   {kAttrOrigsize, 4},      {kAttrSampleGroup, 4},
               {kAttrGroupSeq, 4}, {kAttrSampleRate, 4}, {kAttrGroupRefcount, 4}, {kAttrOutTc, 2},
               {kAttrOutTcOcc, 8}, {kAttrLatency, 8},    {kAttrTimestamp, 8},     {kAttrProto, 2}};
  const uint8_t zeros[8] = {};
  for (const auto& attribute : fixed) {
    NetlinkBuilder b;
    b.begin_message(kPsampleFamily).genl(kCmdSample).attr_host<uint32_t>(kAttrSampleGroup, 1);
    b.attr(attribute.type, zeros, attribute.width - 1).end_message();
    const Parsed parsed = parse_exact(b.bytes());
    CHECK_EQ(parsed.messages.size(), 0u);
    CHECK_EQ(parsed.counters[kMalformed], 1u);
  }
}

TEST_CASE("a fixed-size attribute longer than its type keeps its leading bytes") {
  NetlinkBuilder b;
  b.begin_message(kPsampleFamily).genl(kCmdSample);
  b.attr(kAttrSampleGroup, {0x0a, 0x00, 0x00, 0x00, 0xff, 0xff});
  b.attr(kAttrIifindex, {0x05, 0x00, 0x99, 0x99});
  b.end_message();
  const Parsed parsed = parse_exact(b.bytes());
  if (!CHECK_EQ(parsed.messages.size(), 1u)) return;
  CHECK_EQ(parsed.messages[0].group, 10u);
  CHECK_EQ(parsed.messages[0].iifindex, 5);
}

TEST_CASE("NLA_F_NESTED and NLA_F_NET_BYTEORDER are masked off the attribute type") {
  NetlinkBuilder b;
  b.begin_message(kPsampleFamily).genl(kCmdSample);
  b.attr_host<uint32_t>(kAttrSampleGroup | kNlaFNetByteorder, 9);
  b.attr_host<uint16_t>(kAttrProto | kNlaFNested | kNlaFNetByteorder, 0x0800);
  b.end_message();
  const Parsed parsed = parse_exact(b.bytes());
  if (!CHECK_EQ(parsed.messages.size(), 1u)) return;
  CHECK_EQ(parsed.messages[0].group, 9u);
  CHECK_EQ(parsed.messages[0].proto, 0x0800);
  CHECK_EQ(parsed.messages[0].unknown_attrs, 0);
}

TEST_CASE("unknown attributes are skipped and counted while their neighbours still decode") {
  NetlinkBuilder b;
  b.begin_message(kPsampleFamily).genl(kCmdSample);
  b.attr_host<uint32_t>(17, 0xffffffff);
  b.attr_host<uint32_t>(kAttrSampleGroup, 12);
  b.attr(200, {1, 2, 3, 4, 5, 6, 7});
  b.attr_host<uint16_t>(kAttrIifindex, 8);
  b.flag(0x3fff);
  b.begin_nest(kAttrTunnel).attr_host<uint8_t>(kTunTtl, 3).attr_host<uint32_t>(kTunCount, 1).end_nest();
  b.attr_host<uint16_t>(kAttrProto, 0x0806);
  b.end_message();
  const Parsed parsed = parse_exact(b.bytes());
  if (!CHECK_EQ(parsed.messages.size(), 1u)) return;
  const Message& m = parsed.messages[0];
  CHECK_EQ(m.unknown_attrs, 4);
  CHECK_EQ(parsed.counters[kUnknownAttributes], 4u);
  CHECK_EQ(m.group, 12u);
  CHECK_EQ(m.iifindex, 8);
  CHECK_EQ(m.tunnel.ttl, 3);
  CHECK_EQ(m.proto, 0x0806);
  CHECK_EQ(m.present, (1u << kAttrSampleGroup) | (1u << kAttrIifindex) | (1u << kAttrTunnel) | (1u << kAttrProto));
}

TEST_CASE("a sample without SAMPLE_GROUP is malformed") {
  NetlinkBuilder b;
  b.begin_message(kPsampleFamily).genl(kCmdSample).attr_host<uint16_t>(kAttrIifindex, 1).end_message();
  const Parsed parsed = parse_exact(b.bytes());
  CHECK_EQ(parsed.messages.size(), 0u);
  CHECK_EQ(parsed.counters[kMalformed], 1u);
}

TEST_CASE("the last attribute may lack its alignment padding") {
  NetlinkBuilder b;
  b.begin_message(kPsampleFamily).genl(kCmdSample).attr_host<uint32_t>(kAttrSampleGroup, 4);
  b.attr(kAttrData, {1, 2, 3, 4, 5}).end_message(false);
  CHECK_EQ(b.size() % 4, 1u);
  const Parsed parsed = parse_exact(b.bytes());
  if (!CHECK_EQ(parsed.messages.size(), 1u)) return;
  CHECK_EQ(parsed.messages[0].data.length, 5u);
  CHECK_EQ(parsed.counters[kMalformed], 0u);
}

TEST_CASE("nla_len below 4 or beyond the message makes it malformed") {
  for (const uint16_t bad_length : {uint16_t{0}, uint16_t{3}, uint16_t{13}, uint16_t{0xffff}}) {
    NetlinkBuilder b;
    b.begin_message(kPsampleFamily).genl(kCmdSample).attr_host<uint32_t>(kAttrSampleGroup, 4);
    const size_t position = b.size();
    b.attr_host<uint32_t>(kAttrOrigsize, 60).end_message();
    std::vector<uint8_t> bytes = b.bytes();
    std::memcpy(&bytes[position], &bad_length, sizeof bad_length);
    const Parsed parsed = parse_exact(bytes);
    CHECK_EQ(parsed.messages.size(), 0u);
    CHECK_EQ(parsed.counters[kMalformed], 1u);
  }
}

TEST_CASE("group messages decode their group, sequence and refcount") {
  NetlinkBuilder b;
  b.begin_message(kPsampleFamily).genl(kCmdNewGroup);
  b.attr_host<uint32_t>(kAttrSampleGroup, 10).attr_host<uint32_t>(kAttrGroupRefcount, 1);
  b.attr_host<uint32_t>(kAttrGroupSeq, 99).end_message();
  const Parsed parsed = parse_exact(b.bytes());
  if (!CHECK_EQ(parsed.messages.size(), 1u)) return;
  const Message& m = parsed.messages[0];
  CHECK(m.kind == MessageKind::kGroup);
  CHECK_EQ(m.cmd, kCmdNewGroup);
  CHECK_EQ(m.group, 10u);
  CHECK_EQ(m.group_refcount, 1u);
  CHECK_EQ(m.group_seq, 99u);
  CHECK(!m.swapped_layout);
  CHECK_EQ(parsed.samples(), 0u);
}

}  // namespace
}  // namespace ovnpsample::testing
