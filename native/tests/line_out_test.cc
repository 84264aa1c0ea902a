// The renderer's fast path (../line_out.h): lines written straight into the output, bounded by
// it. The group-event case is the sample_json fuzz target's finding
// (../fuzz/regressions/sample_json/group-event-empty-packet.bin).
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "check.h"
#include "netlink_builder.h"
#include "render/decimal.h"
#include "render/line_out.h"
#include "render/sample_lines.h"
#include "wire/batch_layout.h"
#include "wire/psample_parser.h"
#include "wire/sample_batch.h"

namespace ovnpsample::testing {
namespace {

TEST_CASE("line_out: an empty text with no bytes behind it (a group event's packet part) writes nothing") {
  uint8_t out[8] = {};
  LineOut line(out, out + sizeof out);
  line += std::string_view();
  line += "";
  CHECK_EQ(line.size(), size_t{0});
  CHECK(!line.overflowed());
}

TEST_CASE("line_out: what does not fit is not written, and the line says it overflowed") {
  std::vector<uint8_t> out(8, 'x');
  LineOut line(out.data(), out.data() + 4);
  line += "ab";
  CHECK(!line.overflowed());
  line += "cdef";
  CHECK(line.overflowed());
  line += 'g';
  append_number(line, 12345u);
  CHECK_EQ(std::string(out.begin(), out.end()), std::string("abxxxxxx"));
}

TEST_CASE("render: a group event's line, in both formats, straight into the output") {
  NetlinkBuilder b;
  b.begin_message(kPsampleFamily).genl(kCmdNewGroup);
  b.attr_host<uint32_t>(kAttrSampleGroup, 10).attr_host<uint32_t>(kAttrGroupRefcount, 1).end_message();
  std::vector<Message> messages;
  Stats stats{};
  parse_datagram(b.bytes().data(), b.bytes().size(), kPsampleFamily, messages, stats);
  if (!CHECK_EQ(messages.size(), size_t{1})) return;
  SampleBatch batch;
  batch.append(messages[0], b.bytes().data(), false, 0);
  for (const auto& [format, expected] :
       {std::pair{LineFormat::kJson, std::string("{\"command\":\"new-group\",\"group\":10,")},
        std::pair{LineFormat::kText, std::string("new-group group=10 refcount=1\n")}}) {
    SampleLineRenderer renderer(format);
    const RenderRequest request{batch.bytes.data(), batch.size(), batch.count, layout::kLittleEndian};
    std::vector<uint8_t> out(512);
    const RenderResult result = renderer.render(request, {}, out.data(), out.size());
    CHECK_EQ(static_cast<uint32_t>(result.stop), static_cast<uint32_t>(RenderStop::kEnd));
    CHECK_EQ(result.lines, uint32_t{1});
    const std::string line(reinterpret_cast<const char*>(out.data()), result.written);
    CHECK_EQ(line.substr(0, expected.size()), expected);
    CHECK_EQ(line.back(), '\n');
  }
}

TEST_CASE("line_out: hex a word at a time is two lowercase digits a byte, every byte value, every length and tail") {
  std::vector<uint8_t> bytes(256 + 7);
  for (size_t i = 0; i < bytes.size(); i++) bytes[i] = static_cast<uint8_t>(i * 7 + (i >> 8));
  for (size_t length = 0; length <= bytes.size(); length++) {
    std::string expected;
    for (size_t i = 0; i < length; i++) {
      static constexpr char kDigits[] = "0123456789abcdef";
      expected += kDigits[bytes[i] >> 4];
      expected += kDigits[bytes[i] & 15];
    }
    std::string text = "x";
    append_hex(text, bytes.data(), length);
    std::vector<uint8_t> room(2 * length + 1, 'y');
    LineOut line(room.data(), room.data() + room.size());
    append_hex(line, bytes.data(), length);
    if (!CHECK_EQ(text, "x" + expected)) return;
    if (!CHECK_EQ(std::string(room.begin(), room.end() - 1), expected)) return;
    CHECK_EQ(room.back(), uint8_t{'y'});
  }
}

template <typename T>
std::string reference_decimal(T value) {
  char digits[24];
  return std::string(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);
}

template <typename T>
bool writes_decimal(T value) {
  std::string text = "x";
  append_number(text, value);
  const std::string expected = reference_decimal(value);
  std::vector<uint8_t> room(expected.size(), 'y');
  LineOut exact(room.data(), room.data() + room.size());
  append_number(exact, value);
  LineOut short_by_one(room.data(), room.data() + room.size() - 1);
  append_number(short_by_one, value);
  char formatted[kMaxDecimalLength];
  const std::string in_place(formatted, format_decimal(formatted, value));
  return CHECK_EQ(text, "x" + expected) && CHECK_EQ(std::string(room.begin(), room.end()), expected) &&
         CHECK(!exact.overflowed()) && CHECK(short_by_one.overflowed()) && CHECK_EQ(in_place, expected);
}

TEST_CASE(
    "line_out, decimal.h: numbers are std::to_chars's digits at every length, both ends of each type, and negatives") {
  uint64_t power = 1;
  for (int digits = 1; digits <= 20; digits++) {
    for (const uint64_t v : {power - 1, power, power + 1, 2 * power - 1, 9 * power, 9 * power + power - 1}) {
      if (!writes_decimal(v)) return;
    }
    if (digits < 20) power *= 10;
  }
  for (const uint64_t v : {uint64_t{0}, UINT64_MAX, UINT64_MAX - 1, uint64_t{UINT32_MAX}, uint64_t{1} << 63}) {
    if (!writes_decimal(v)) return;
  }
  for (const uint32_t v : {0u, 7u, 42u, 65535u, 4294967295u}) {
    if (!writes_decimal(v)) return;
  }
  for (const int32_t v : {0, -1, 1, -9, -10, 2147483647, -2147483647 - 1}) {
    if (!writes_decimal(v)) return;
  }
  for (const int64_t v : {INT64_MIN, INT64_MIN + 1, int64_t{-1000000000000}, INT64_MAX}) {
    if (!writes_decimal(v)) return;
  }
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 10000; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    if (!writes_decimal(x >> (x % 64)) || !writes_decimal(static_cast<uint32_t>(x))) return;
  }
}

}  // namespace
}  // namespace ovnpsample::testing
