// The batch writer, checked byte by byte against batch_layout.h in the byte order it declares.
#include <cstring>
#include <string>
#include <vector>

#include "check.h"
#include "wire/batch_layout.h"
#include "wire/sample_batch.h"

namespace ovnpsample::testing {
namespace {

namespace record = layout::record;
namespace tunnel_block = layout::tunnel_block;

std::string hex(const uint8_t* bytes, size_t length) {
  static const char digits[] = "0123456789abcdef";
  std::string text;
  for (size_t i = 0; i < length; i++) text += {digits[bytes[i] >> 4], digits[bytes[i] & 15]};
  return text;
}

// Checks the bytes at `offset` are `value` in the layout's declared byte order, composed here
// byte by byte rather than with the writer's own stores.
void expect_number(const std::vector<uint8_t>& bytes, size_t offset, size_t width, uint64_t value, const char* what) {
  uint8_t expected[8];
  for (size_t i = 0; i < width; i++)
    expected[i] = static_cast<uint8_t>(value >> (8 * (layout::kLittleEndian ? i : width - 1 - i)));
  CHECK_EQ(std::string(what) + " " + hex(&bytes[offset], width), std::string(what) + " " + hex(expected, width));
}

template <size_t N>
uint32_t width_of(const layout::Field (&fields)[N], uint32_t offset) {
  for (const layout::Field& f : fields)
    if (f.offset == offset) return f.width;
  return 0;
}

TEST_CASE("batch: every record field is written at its offset, in the declared byte order") {
  std::vector<uint8_t> source(64);
  for (size_t i = 0; i < source.size(); i++) source[i] = static_cast<uint8_t>(0xa0 + i);
  Message m;
  m.kind = MessageKind::kGroup;
  m.cmd = kCmdNewGroup;
  m.present = 0x0001f0f1;
  m.probability = true;
  m.iifindex = 0x1234;
  m.oifindex = 0xfedc;
  m.out_tc = 0x0607;
  m.proto = 0x86dd;
  m.origsize = 0x01020304;
  m.group = 0x0a0b0c0d;
  m.group_seq = 0xdeadbeef;
  m.rate = 0xfffffffe;
  m.group_refcount = 0x11223344;
  m.out_tc_occ = 0x0102030405060708ull;
  m.latency = 0x1112131415161718ull;
  m.timestamp = 0x2122232425262728ull;
  m.data = {8, 5};
  m.user_cookie = {20, 8};

  SampleBatch batch;
  batch.append(Message{}, source.data(), false, 0);  // a first message, so the second is not at 0
  batch.append(m, source.data(), true, -7);
  CHECK_EQ(batch.count, 2u);
  // record, 5 data bytes, 8 cookie bytes, padded to 8
  const size_t second_length = record::kBytes + 16;
  if (!CHECK_EQ(batch.bytes.size(), record::kBytes + second_length)) return;
  expect_number(batch.bytes, record::kLength, 4, record::kBytes, "first length");
  std::vector<uint8_t> r(batch.bytes.begin() + record::kBytes, batch.bytes.end());
  const auto flags = static_cast<uint32_t>(MessageKind::kGroup) | uint32_t{kCmdNewGroup} << 8 |
                     record::kFlagProbability | record::kFlagNsid;
  const struct {
    uint32_t offset;
    uint64_t value;
    const char* what;
  } expected[] = {
      {record::kPresent, m.present, "present"},
      {record::kKindCmdFlags, flags, "kindCmdFlags"},
      {record::kGroup, m.group, "group"},
      {record::kGroupSeq, m.group_seq, "groupSeq"},
      {record::kIfindexes, 0xfedc1234u, "ifindexes"},
      {record::kOrigsize, m.origsize, "origsize"},
      {record::kRate, m.rate, "rate"},
      {record::kGroupRefcount, m.group_refcount, "groupRefcount"},
      {record::kOutTcProto, 0x86dd0607u, "outTcProto"},
      {record::kNsid, static_cast<uint32_t>(-7), "nsid"},
      {record::kTimestamp, m.timestamp, "timestamp"},
      {record::kLatency, m.latency, "latency"},
      {record::kOutTcOcc, m.out_tc_occ, "outTcOcc"},
      {record::kDataOffset, record::kBytes, "dataOffset"},  // from the start of its own record
      {record::kDataLength, 5, "dataLength"},
      {record::kCookieOffset, record::kBytes + 5, "cookieOffset"},
      {record::kCookieLength, 8, "cookieLength"},
      {record::kTunnelOffset, 0, "tunnelOffset"},
      {record::kLength, second_length, "length"},
  };
  CHECK_EQ(sizeof expected / sizeof expected[0], sizeof layout::kRecordFields / sizeof(layout::Field));
  for (const auto& e : expected) expect_number(r, e.offset, width_of(layout::kRecordFields, e.offset), e.value, e.what);
  CHECK_EQ(std::memcmp(&r[record::kBytes], &source[8], 5), 0);
  CHECK_EQ(std::memcmp(&r[record::kBytes + 5], &source[20], 8), 0);
  CHECK_EQ(r[record::kBytes + 13] | r[record::kBytes + 14] | r[record::kBytes + 15], 0);  // padding
}

TEST_CASE("batch: the tunnel block is 8-byte aligned, its numbers in the declared order, its bytes as they came") {
  std::vector<uint8_t> source(32);
  for (size_t i = 0; i < source.size(); i++) source[i] = static_cast<uint8_t>(i);
  Message m;
  m.present = 1u << kAttrTunnel;
  m.data = {0, 3};  // 3 payload bytes first: the block must be realigned after them
  Tunnel& t = m.tunnel;
  t.present = 0x00019fff;
  t.vxlan_gbp = 0x00800100;
  t.id = 0x0102030405060708ull;
  std::memcpy(t.ipv4_src, "\xc0\x00\x02\x01", 4);
  std::memcpy(t.ipv4_dst, "\xc6\x33\x64\x02", 4);
  for (uint8_t i = 0; i < 16; i++) {
    t.ipv6_src[i] = static_cast<uint8_t>(0x20 + i);
    t.ipv6_dst[i] = static_cast<uint8_t>(0x40 + i);
  }
  t.tos = 0x28;
  t.ttl = 64;
  t.tp_src = 49152;
  t.tp_dst = 6081;
  t.geneve_opts = {16, 8};
  t.erspan_opts = {24, 4};

  SampleBatch batch;
  batch.append(m, source.data(), false, 0);
  const uint32_t offset = record::kBytes + 8;  // from the record's start: after it and the 3 data bytes, realigned
  expect_number(batch.bytes, record::kTunnelOffset, 4, offset, "tunnelOffset");
  expect_number(batch.bytes, record::kKindCmdFlags, 4, record::kFlagTunnel, "kindCmdFlags");
  // the tunnel block, its 12 option bytes, padded to 8
  if (!CHECK_EQ(batch.bytes.size(), offset + tunnel_block::kBytes + 16)) return;
  expect_number(batch.bytes, record::kLength, 4, offset + tunnel_block::kBytes + 16, "length");
  std::vector<uint8_t> b(batch.bytes.begin() + offset, batch.bytes.begin() + offset + tunnel_block::kBytes);
  expect_number(b, tunnel_block::kPresent, 4, t.present, "present");
  expect_number(b, tunnel_block::kVxlanGbp, 4, t.vxlan_gbp, "vxlanGbp");
  expect_number(b, tunnel_block::kId, 8, t.id, "id");
  expect_number(b, tunnel_block::kTos, 1, t.tos, "tos");
  expect_number(b, tunnel_block::kTtl, 1, t.ttl, "ttl");
  expect_number(b, tunnel_block::kTpSrc, 2, t.tp_src, "tpSrc");
  expect_number(b, tunnel_block::kTpDst, 2, t.tp_dst, "tpDst");
  expect_number(b, tunnel_block::kGeneveOffset, 4, offset + tunnel_block::kBytes, "geneveOffset");
  expect_number(b, tunnel_block::kGeneveLength, 4, 8, "geneveLength");
  expect_number(b, tunnel_block::kErspanOffset, 4, offset + tunnel_block::kBytes + 8, "erspanOffset");
  expect_number(b, tunnel_block::kErspanLength, 4, 4, "erspanLength");
  CHECK_EQ(std::memcmp(&b[tunnel_block::kIpv4Src], t.ipv4_src, 4), 0);
  CHECK_EQ(std::memcmp(&b[tunnel_block::kIpv4Dst], t.ipv4_dst, 4), 0);
  CHECK_EQ(std::memcmp(&b[tunnel_block::kIpv6Src], t.ipv6_src, 16), 0);
  CHECK_EQ(std::memcmp(&b[tunnel_block::kIpv6Dst], t.ipv6_dst, 16), 0);
  CHECK_EQ(std::memcmp(batch.bytes.data() + offset + tunnel_block::kBytes, &source[16], 12), 0);
}

}  // namespace
}  // namespace ovnpsample::testing
