// The attribute walk both parsers share (psample messages, controller messages).
#include <memory>
#include <vector>

#include "check.h"
#include "netlink_builder.h"
#include "wire/nla.h"

namespace ovnpsample::testing {
namespace {

struct Seen {
  uint16_t type;
  size_t offset;  // of the payload, from the start of the walked bytes
  size_t length;
};

struct Walked {
  bool ok;
  std::vector<Seen> seen;
};

// Walks a heap copy of exactly `length` bytes, so AddressSanitizer catches any read past them.
Walked walk_exact(const std::vector<uint8_t>& bytes, size_t length, size_t stop_after = SIZE_MAX) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[length]);
  std::copy(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(length), copy.get());
  Walked walked{true, {}};
  walked.ok = nla::walk(copy.get(), length, [&](const nla::Attribute& a) {
    walked.seen.push_back({a.type, static_cast<size_t>(a.payload - copy.get()), a.length});
    return walked.seen.size() < stop_after;
  });
  return walked;
}

Walked walk_exact(const std::vector<uint8_t>& bytes) { return walk_exact(bytes, bytes.size()); }

// Three attributes as a message body: a u8 (3 bytes of padding), a nest with the flag bits set,
// and a u32.
std::vector<uint8_t> three_attributes() {
  NetlinkBuilder b;
  b.attr_host<uint8_t>(4, 64);
  b.begin_nest(8 | kNlaFNested | kNlaFNetByteorder).attr_host<uint16_t>(1, 7).end_nest();
  b.attr_host<uint32_t>(3, 10);
  return b.bytes();
}

TEST_CASE("nla: visits every attribute in order, flags masked, payload without header or padding") {
  const Walked walked = walk_exact(three_attributes());
  CHECK(walked.ok);
  if (!CHECK_EQ(walked.seen.size(), 3u)) return;
  CHECK_EQ(walked.seen[0].type, 4);
  CHECK_EQ(walked.seen[0].offset, 4u);
  CHECK_EQ(walked.seen[0].length, 1u);
  CHECK_EQ(walked.seen[1].type, 8);
  CHECK_EQ(walked.seen[1].offset, 12u);
  CHECK_EQ(walked.seen[1].length, 8u);  // the inner attribute, padding included as nla_nest_end counts it
  CHECK_EQ(walked.seen[2].type, 3);
  CHECK_EQ(walked.seen[2].offset, 24u);
  CHECK_EQ(walked.seen[2].length, 4u);
}

TEST_CASE("nla: nothing to walk is a complete walk") {
  CHECK(walk_exact({}).ok);
  CHECK_EQ(walk_exact({}).seen.size(), 0u);
}

TEST_CASE("nla: a last attribute without its padding, and up to three bytes of slack, are accepted") {
  NetlinkBuilder b;
  b.attr_host<uint32_t>(1, 5).attr(2, {9});  // 5 bytes: no padding after it
  Walked walked = walk_exact(b.bytes());
  CHECK(walked.ok);
  CHECK_EQ(walked.seen.size(), 2u);
  for (const size_t slack : {1u, 2u, 3u}) {
    std::vector<uint8_t> bytes = three_attributes();
    bytes.insert(bytes.end(), slack, 0xee);
    walked = walk_exact(bytes);
    CHECK(walked.ok);
    CHECK_EQ(walked.seen.size(), 3u);
  }
}

TEST_CASE("nla: a header shorter than a header, or running past the end, stops the walk as garbled") {
  std::vector<uint8_t> short_header = three_attributes();
  short_header[8] = 3;  // the nest's nla_len
  short_header[9] = 0;
  Walked walked = walk_exact(short_header);
  CHECK(!walked.ok);
  CHECK_EQ(walked.seen.size(), 1u);

  std::vector<uint8_t> overrun = three_attributes();
  overrun[20] = 9;  // the u32's nla_len: one byte more than there is
  walked = walk_exact(overrun);
  CHECK(!walked.ok);
  CHECK_EQ(walked.seen.size(), 2u);
}

TEST_CASE("nla: a visitor that refuses an attribute ends the walk there") {
  const Walked walked = walk_exact(three_attributes(), three_attributes().size(), 2);
  CHECK(!walked.ok);
  CHECK_EQ(walked.seen.size(), 2u);
}

TEST_CASE("nla: every truncation either ends cleanly before the cut or is garbled, never reads past it") {
  const std::vector<uint8_t> bytes = three_attributes();
  for (size_t cut = 0; cut < bytes.size(); cut++) {
    const Walked walked = walk_exact(bytes, cut);
    for (const Seen& seen : walked.seen) CHECK(seen.offset + seen.length <= cut);
    // Only slack shorter than a header can be left over without the walk calling it garbled.
    if (walked.ok && !walked.seen.empty()) CHECK(cut - (walked.seen.back().offset + walked.seen.back().length) < 8);
  }
}

}  // namespace
}  // namespace ovnpsample::testing
