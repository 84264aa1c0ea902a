// The packet's description (../packet_text.h) and the sample's text line (../sample_text.h,
// through ../sample_lines.h) on the real captures and the cases worth a name;
// test/output/text-golden.test.ts checks both byte for byte on the golden corpora through the addon.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "check.h"
#include "fixtures.h"
#include "packet/packet_text.h"
#include "render/sample_lines.h"
#include "wire/batch_layout.h"
#include "wire/psample_parser.h"
#include "wire/sample_batch.h"

namespace ovnpsample::testing {
namespace {

// Describes a heap copy of exactly the bytes, so AddressSanitizer catches any read past them.
std::string text_of(const std::vector<uint8_t>& bytes, uint16_t proto) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[bytes.size()]);
  std::copy(bytes.begin(), bytes.end(), copy.get());
  std::string text;
  append_packet_text(text, copy.get(), bytes.size(), proto);
  return text;
}

std::vector<uint8_t> bytes_of(const std::string& hex) { return *decode_hex(hex); }

// The fixture's messages appended to a batch, as the reader thread does.
SampleBatch batch_of(const char* fixture_name) {
  SampleBatch batch;
  const auto fixture = load_fixture(fixture_name);
  if (!CHECK(fixture.has_value())) return batch;
  std::vector<Message> messages;
  Stats stats{};
  parse_datagram(fixture->bytes.data(), fixture->bytes.size(), 0, messages, stats);
  for (const Message& m : messages) batch.append(m, fixture->bytes.data(), false, 0);
  return batch;
}

TEST_CASE("packet_text: no data, raw IP, an IPv4 header cut in its transport") {
  CHECK_EQ(text_of({}, 0x0800), std::string("Ethernet len=0 truncated in ethernet"));
  // Raw IPv4 (the first byte says so), total length 60 but 28 bytes of data: UDP ports, then cut.
  CHECK_EQ(text_of(bytes_of("4500003c000000004011000001020304050607080035303900280000"), 0x0800),
           std::string("1.2.3.4:53 > 5.6.7.8:12345 UDP len=28 truncated in payload"));
}

TEST_CASE("packet_text: a TCP data offset below 5 words is malformed, after the flags") {
  CHECK_EQ(
      text_of(bytes_of("45000028000000004006000001020304050607080001000200000001000000022012000000000000"), 0x0800),
      std::string(
          "1.2.3.4:1 > 5.6.7.8:2 TCP [SYN,ACK] len=40 malformed tcp: data offset 8 is below the minimum 20 bytes"));
}

TEST_CASE("sample_text: the OVS capture's line, with and without its event, and the renderer's walk") {
  const SampleBatch batch = batch_of("ovs-1");
  if (!CHECK_EQ(batch.count, uint32_t{1})) return;
  SampleLineRenderer renderer(LineFormat::kText);
  std::string line;
  CHECK(renderer.append_line(batch.bytes.data(), batch.size(), 0, layout::kLittleEndian, nullptr, line));
  CHECK_EQ(line, std::string("group=10 in=4 app=43 dp=3 point=1012 ARP who-has 10.0.0.2 tell 10.0.0.1"));
  const std::string_view event = " | Allowed";
  line.clear();
  CHECK(renderer.append_line(batch.bytes.data(), batch.size(), 0, layout::kLittleEndian, &event, line));
  CHECK_EQ(line, std::string("group=10 in=4 app=43 dp=3 point=1012 ARP who-has 10.0.0.2 tell 10.0.0.1 | Allowed"));

  renderer.events().set(0x2b000003, 1012, event);
  RenderRequest request;
  request.batch = batch.bytes.data();
  request.batch_size = batch.size();
  request.count = batch.count;
  request.little_endian = layout::kLittleEndian;
  request.with_events = true;
  std::vector<uint8_t> out(256);
  const RenderResult result = renderer.render(request, {}, out.data(), out.size());
  CHECK_EQ(static_cast<uint32_t>(result.stop), static_cast<uint32_t>(RenderStop::kEnd));
  CHECK_EQ(std::string(reinterpret_cast<const char*>(out.data()), result.written), line + "\n");
}

TEST_CASE("sample_text: a record that lies is refused, nothing appended") {
  SampleBatch batch = batch_of("ovs-1");
  if (!CHECK_EQ(batch.count, uint32_t{1})) return;
  const uint32_t past = 0xfffffff0;
  std::memcpy(batch.bytes.data() + layout::record::kDataOffset, &past, sizeof past);
  SampleLineRenderer renderer(LineFormat::kText);
  std::string line = "kept";
  CHECK(!renderer.append_line(batch.bytes.data(), batch.size(), 0, layout::kLittleEndian, nullptr, line));
  CHECK_EQ(line, std::string("kept"));
}

}  // namespace
}  // namespace ovnpsample::testing
