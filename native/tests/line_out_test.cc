// The renderer's fast path (../line_out.h): lines written straight into the output, bounded by
// it. The group-event case is the sample_json fuzz target's finding
// (../fuzz/regressions/sample_json/group-event-empty-packet.bin).
#include <string>
#include <string_view>
#include <vector>

#include "../batch_layout.h"
#include "../line_out.h"
#include "../psample_parser.h"
#include "../sample_batch.h"
#include "../sample_lines.h"
#include "check.h"
#include "netlink_builder.h"

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
  for (const auto& [format, expected] : {std::pair{LineFormat::kJson, std::string("{\"command\":\"new-group\",\"group\":10,")},
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

}  // namespace
}  // namespace ovnpsample::testing
