#include <cstring>

#include "check.h"
#include "fixtures.h"
#include "parse_exact.h"

namespace ovnpsample::testing {
namespace {

constexpr size_t kFirstAttributeOffset = 16 + 4;  // nlmsghdr + genlmsghdr

std::vector<Fixture> all_fixtures() {
  std::vector<Fixture> fixtures;
  for (const std::string& name : fixture_names()) {
    std::optional<Fixture> fixture = load_fixture(name);
    if (CHECK(fixture.has_value())) fixtures.push_back(std::move(*fixture));
  }
  return fixtures;
}

std::vector<size_t> attribute_positions(const std::vector<uint8_t>& bytes) {
  std::vector<size_t> positions;
  for (size_t offset = kFirstAttributeOffset; offset + 4 <= bytes.size();) {
    positions.push_back(offset);
    uint16_t nla_len;
    std::memcpy(&nla_len, &bytes[offset], sizeof nla_len);
    offset += (nla_len + 3u) & ~3u;
  }
  return positions;
}

// Every range a decoded message hands out must lie inside the bytes it was decoded from.
bool ranges_inside(const Parsed& parsed, size_t length) {
  for (const Message& m : parsed.messages) {
    if (!within(m.data, length) || !within(m.user_cookie, length) || !within(m.tunnel.geneve_opts, length) ||
        !within(m.tunnel.erspan_opts, length)) {
      return false;
    }
  }
  return true;
}

TEST_CASE("every prefix of every real capture is malformed-counted, or empty for prefix 0") {
  for (const Fixture& fixture : all_fixtures()) {
    for (size_t length = 0; length < fixture.bytes.size(); ++length) {
      for (const uint16_t family : {kPsampleFamily, uint16_t{0}}) {
        const Parsed parsed = parse_exact(fixture.bytes.data(), length, family);
        CHECK_EQ(parsed.messages.size(), 0u);
        CHECK_EQ(parsed.counters[kMalformed], length == 0 ? 0u : 1u);
      }
    }
  }
}

TEST_CASE("a corrupted nla_len at every attribute position never escapes the message") {
  for (const Fixture& fixture : all_fixtures()) {
    const std::vector<size_t> positions = attribute_positions(fixture.bytes);
    CHECK(positions.size() >= 8u);
    for (const size_t position : positions) {
      std::vector<uint8_t> bytes = fixture.bytes;
      const size_t room = bytes.size() - position;
      for (uint32_t value = 0; value <= 0xffff; ++value) {
        const uint16_t nla_len = static_cast<uint16_t>(value);
        std::memcpy(&bytes[position], &nla_len, sizeof nla_len);
        const Parsed parsed = parse_exact(bytes);
        CHECK_EQ(parsed.messages.size() + parsed.counters[kMalformed], 1u);
        CHECK(ranges_inside(parsed, bytes.size()));
        if (nla_len < 4 || nla_len > room) {
          CHECK_EQ(parsed.counters[kMalformed], 1u);
        }
      }
    }
  }
}

TEST_CASE("the four real captures in one datagram decode in order") {
  std::vector<uint8_t> datagram;
  const std::vector<Fixture> fixtures = all_fixtures();
  for (const Fixture& fixture : fixtures) {
    datagram.insert(datagram.end(), fixture.bytes.begin(), fixture.bytes.end());
    datagram.resize((datagram.size() + 3) & ~size_t{3});
  }
  const Parsed parsed = parse_exact(datagram);
  if (!CHECK_EQ(parsed.messages.size(), fixtures.size())) return;
  CHECK_EQ(parsed.messages[0].group, 7u);
  CHECK_EQ(parsed.messages[2].group, 10u);
  CHECK_EQ(parsed.samples(), 4u);
  CHECK(ranges_inside(parsed, datagram.size()));
  CHECK_EQ(parse_exact(datagram, 35).counters[kForeign], 4u);
}

TEST_CASE("a real capture whose nlmsg_len omits the last attribute's padding still decodes") {
  std::optional<Fixture> fixture = load_fixture("tc-nocookie-1");
  if (!CHECK(fixture.has_value())) return;
  std::vector<uint8_t> bytes = fixture->bytes;
  bytes.resize(bytes.size() - 2);  // DATA is last and holds 42 bytes: two bytes of padding
  const uint32_t nlmsg_len = static_cast<uint32_t>(bytes.size());
  std::memcpy(bytes.data(), &nlmsg_len, sizeof nlmsg_len);
  const Parsed parsed = parse_exact(bytes);
  if (!CHECK_EQ(parsed.messages.size(), 1u)) return;
  CHECK_EQ(parsed.messages[0].data.length, 42u);
  CHECK_EQ(parsed.messages[0].data.offset + parsed.messages[0].data.length, bytes.size());
}

}  // namespace
}  // namespace ovnpsample::testing
