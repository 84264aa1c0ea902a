#include <cstdio>
#include <string>

#include "check.h"
#include "fixtures.h"
#include "parse_exact.h"

namespace ovnpsample::testing {
namespace {

std::string hex_of(const std::vector<uint8_t>& bytes, const ByteRange& range) {
  std::string text;
  char pair[3];
  for (uint32_t i = 0; i < range.length; ++i) {
    std::snprintf(pair, sizeof pair, "%02x", bytes[range.offset + i]);
    text += pair;
  }
  return text;
}

struct NumericField {
  const char* name;
  PsampleAttr attribute;
  uint64_t (*read)(const Message&);
};

const NumericField kNumericFields[] = {
    {"IIFINDEX", kAttrIifindex, [](const Message& m) -> uint64_t { return m.iifindex; }},
    {"OIFINDEX", kAttrOifindex, [](const Message& m) -> uint64_t { return m.oifindex; }},
    {"ORIGSIZE", kAttrOrigsize, [](const Message& m) -> uint64_t { return m.origsize; }},
    {"SAMPLE_GROUP", kAttrSampleGroup, [](const Message& m) -> uint64_t { return m.group; }},
    {"GROUP_SEQ", kAttrGroupSeq, [](const Message& m) -> uint64_t { return m.group_seq; }},
    {"SAMPLE_RATE", kAttrSampleRate, [](const Message& m) -> uint64_t { return m.rate; }},
    {"GROUP_REFCOUNT", kAttrGroupRefcount, [](const Message& m) -> uint64_t { return m.group_refcount; }},
    {"OUT_TC", kAttrOutTc, [](const Message& m) -> uint64_t { return m.out_tc; }},
    {"OUT_TC_OCC", kAttrOutTcOcc, [](const Message& m) -> uint64_t { return m.out_tc_occ; }},
    {"LATENCY", kAttrLatency, [](const Message& m) -> uint64_t { return m.latency; }},
    {"TIMESTAMP", kAttrTimestamp, [](const Message& m) -> uint64_t { return m.timestamp; }},
    {"PROTO", kAttrProto, [](const Message& m) -> uint64_t { return m.proto; }},
};

// Compares one attribute named in the .json with the decoded message; returns its bit in `present`.
uint32_t check_attribute(const Fixture& fixture, const Message& m, const std::string& name, const JsonValue& value) {
  for (const NumericField& field : kNumericFields) {
    if (name == field.name) {
      CHECK_EQ(field.read(m), value.as_unsigned());
      return 1u << field.attribute;
    }
  }
  if (name == "DATA") {
    const JsonValue* length = value.find("len");
    if (CHECK(length != nullptr)) CHECK_EQ(uint64_t{m.data.length}, length->as_unsigned());
    return 1u << kAttrData;
  }
  if (name == "USER_COOKIE") {
    CHECK_EQ(hex_of(fixture.bytes, m.user_cookie), value.text);
    return 1u << kAttrUserCookie;
  }
  if (name == "SAMPLE_PROBABILITY") {
    CHECK_EQ(m.probability, value.boolean);
    return 1u << kAttrSampleProbability;
  }
  CHECK_EQ(name, std::string("an attribute this test knows"));
  return 0;
}

void check_fixture(const std::string& name) {
  const std::optional<Fixture> fixture = load_fixture(name);
  if (!CHECK(fixture.has_value())) {
    std::fprintf(stderr, "  cannot read %s/%s.{hex,json}\n", fixture_directory().c_str(), name.c_str());
    return;
  }
  const JsonValue& expected = fixture->expected;
  const Parsed parsed = parse_exact(fixture->bytes, static_cast<uint16_t>(expected.find("familyId")->as_unsigned()));
  if (!CHECK_EQ(parsed.messages.size(), 1u)) return;
  const Message& m = parsed.messages[0];
  CHECK_EQ(uint64_t{fixture->bytes.size()}, expected.find("nlmsgLen")->as_unsigned());
  CHECK_EQ(uint64_t{m.nlmsg_type}, expected.find("familyId")->as_unsigned());
  CHECK_EQ(uint64_t{m.cmd}, expected.find("cmd")->as_unsigned());
  CHECK_EQ(uint64_t{m.version}, expected.find("version")->as_unsigned());
  CHECK(m.kind == MessageKind::kSample);

  uint32_t expected_present = 0;
  for (const auto& [attribute, value] : expected.find("attrs")->members) {
    expected_present |= check_attribute(*fixture, m, attribute, value);
  }
  CHECK_EQ(m.present, expected_present);
  CHECK_EQ(m.probability, expected.find("attrs")->find("SAMPLE_PROBABILITY") != nullptr);
  CHECK(!m.swapped_layout);
  CHECK_EQ(m.unknown_attrs, 0);
  // The captured frame's own ethertype must agree with PROTO: DATA really points at the frame.
  if (CHECK(m.data.length >= 14)) {
    CHECK_EQ(fixture->bytes[m.data.offset + 12] << 8 | fixture->bytes[m.data.offset + 13], int{m.proto});
  }
  CHECK_EQ(parsed.counters[kMalformed], 0u);
  CHECK_EQ(parsed.samples(), 1u);
}

TEST_CASE("real capture tc-cookie-1 decodes to exactly its .json") { check_fixture("tc-cookie-1"); }
TEST_CASE("real capture tc-nocookie-1 decodes to exactly its .json") { check_fixture("tc-nocookie-1"); }
TEST_CASE("real capture ovs-1 decodes to exactly its .json") { check_fixture("ovs-1"); }
TEST_CASE("real capture ovs-2 decodes to exactly its .json") { check_fixture("ovs-2"); }

}  // namespace
}  // namespace ovnpsample::testing
