#include <cstring>

#include "check.h"
#include "netlink_builder.h"
#include "parse_exact.h"

namespace ovnpsample::testing {
namespace {

constexpr uint16_t kVxlanExtGbp = 1;

NetlinkBuilder& sample_header(NetlinkBuilder& b) {
  return b.begin_message(kPsampleFamily).genl(kCmdSample).attr_host<uint32_t>(kAttrSampleGroup, 1);
}

TEST_CASE("every tunnel key attribute decodes to its exact value") {
  const uint8_t ipv6_src[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01};
  const uint8_t ipv6_dst[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55};
  NetlinkBuilder b;
  sample_header(b).begin_nest(kAttrTunnel | kNlaFNested);
  b.attr_big_endian<uint64_t>(kTunId, 0x0000000000abcdefull);
  b.attr(kTunIpv4Src, {192, 0, 2, 1});
  b.attr(kTunIpv4Dst, {198, 51, 100, 7});
  b.attr_host<uint8_t>(kTunTos, 0xb8);
  b.attr_host<uint8_t>(kTunTtl, 63);
  b.flag(kTunDontFragment);
  b.flag(kTunCsum);
  b.flag(kTunOam);
  b.attr(kTunGeneveOpts, {0x01, 0x02, 0x80, 0x01, 0xde, 0xad, 0xbe, 0xef});
  b.attr_big_endian<uint16_t>(kTunTpSrc, 49152);
  b.attr_big_endian<uint16_t>(kTunTpDst, 6081);
  b.begin_nest(kTunVxlanOpts | kNlaFNested).attr_host<uint32_t>(kVxlanExtGbp, 0x00800123).end_nest();
  b.attr(kTunIpv6Src, ipv6_src, sizeof ipv6_src);
  b.attr(kTunIpv6Dst, ipv6_dst, sizeof ipv6_dst);
  b.attr(kTunPad, {0, 0, 0, 0});
  b.attr(kTunErspanOpts, {0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x2a});
  b.flag(kTunIpv4InfoBridge);
  b.end_nest().end_message();
  const std::vector<uint8_t> bytes = b.bytes();

  const Parsed parsed = parse_exact(bytes);
  if (!CHECK_EQ(parsed.messages.size(), 1u)) return;
  const Message& m = parsed.messages[0];
  const Tunnel& t = m.tunnel;
  CHECK(m.present & (1u << kAttrTunnel));
  CHECK_EQ(t.present, (1u << kTunCount) - 1);
  CHECK_EQ(t.id, 0xabcdefull);
  CHECK_EQ(std::memcmp(t.ipv4_src, "\xc0\x00\x02\x01", 4), 0);
  CHECK_EQ(std::memcmp(t.ipv4_dst, "\xc6\x33\x64\x07", 4), 0);
  CHECK_EQ(t.tos, 0xb8);
  CHECK_EQ(t.ttl, 63);
  CHECK_EQ(t.tp_src, 49152);
  CHECK_EQ(t.tp_dst, 6081);
  CHECK_EQ(t.vxlan_gbp, 0x00800123u);
  CHECK_EQ(std::memcmp(t.ipv6_src, ipv6_src, 16), 0);
  CHECK_EQ(std::memcmp(t.ipv6_dst, ipv6_dst, 16), 0);
  CHECK_EQ(t.geneve_opts.length, 8u);
  CHECK_EQ(std::memcmp(&bytes[t.geneve_opts.offset], "\x01\x02\x80\x01\xde\xad\xbe\xef", 8), 0);
  CHECK_EQ(t.erspan_opts.length, 8u);
  CHECK_EQ(bytes[t.erspan_opts.offset + 7], 0x2a);
  CHECK_EQ(m.unknown_attrs, 0);
}

TEST_CASE("a tunnel key shorter than its type makes the message malformed") {
  const struct {
    uint16_t type;
    size_t width;
  } fixed[] = {{kTunId, 8},    {kTunIpv4Src, 4}, {kTunIpv4Dst, 4},  {kTunTos, 1},     {kTunTtl, 1},
               {kTunTpSrc, 2}, {kTunTpDst, 2},   {kTunIpv6Src, 16}, {kTunIpv6Dst, 16}};
  const uint8_t zeros[16] = {};
  for (const auto& key : fixed) {
    NetlinkBuilder b;
    sample_header(b).begin_nest(kAttrTunnel).attr(key.type, zeros, key.width - 1).end_nest().end_message();
    const Parsed parsed = parse_exact(b.bytes());
    CHECK_EQ(parsed.messages.size(), 0u);
    CHECK_EQ(parsed.counters[kMalformed], 1u);
  }
}

TEST_CASE("a garbled tunnel nest or VXLAN option nest makes the message malformed") {
  NetlinkBuilder broken_tunnel;
  sample_header(broken_tunnel).attr(kAttrTunnel, {0x02, 0x00, 0x04, 0x00}).end_message();
  CHECK_EQ(parse_exact(broken_tunnel.bytes()).counters[kMalformed], 1u);

  NetlinkBuilder short_gbp;
  sample_header(short_gbp).begin_nest(kAttrTunnel).begin_nest(kTunVxlanOpts);
  short_gbp.attr(kVxlanExtGbp, {1, 2}).end_nest().end_nest().end_message();
  CHECK_EQ(parse_exact(short_gbp.bytes()).counters[kMalformed], 1u);
}

TEST_CASE("unknown VXLAN option keys are counted and skipped") {
  NetlinkBuilder b;
  sample_header(b).begin_nest(kAttrTunnel).begin_nest(kTunVxlanOpts);
  b.attr_host<uint32_t>(9, 1).attr_host<uint32_t>(kVxlanExtGbp, 5).end_nest().end_nest().end_message();
  const Parsed parsed = parse_exact(b.bytes());
  if (!CHECK_EQ(parsed.messages.size(), 1u)) return;
  CHECK_EQ(parsed.messages[0].tunnel.vxlan_gbp, 5u);
  CHECK_EQ(parsed.messages[0].unknown_attrs, 1);
}

}  // namespace
}  // namespace ovnpsample::testing
