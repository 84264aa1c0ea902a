// watch's human line (../render/event_human.h): widths counted as String.length counts them,
// widening up to 40, the clock of the time of day it was told, the colour around the verdict's
// column, "-" without the packet, and the same bytes written again after a LineOut overflowed.
// The whole line against the TypeScript formatter it replaced, time zones included:
// test/output/human-golden.test.ts.
#include <cstdint>
#include <string>

#include "check.h"
#include "render/event_human.h"
#include "render/line_out.h"

namespace ovnpsample::testing {
namespace {

HumanTexts texts(std::string_view policy, std::string_view sides = "a \xe2\x86\x92 b") {
  HumanTexts t;
  t.verdict = event_human::kDrop;
  t.policy = policy;
  t.namespace_text = "shop";
  t.sides = sides;
  t.interface = "eth0";
  t.sentence = "Dropped";
  return t;
}

TEST_CASE("event_human: UTF-16 code units of UTF-8 text, as String.length counts them") {
  CHECK_EQ(utf16_length(""), size_t{0});
  CHECK_EQ(utf16_length("abc"), size_t{3});
  CHECK_EQ(utf16_length("\xc3\xbc"), size_t{1});          // ü
  CHECK_EQ(utf16_length("\xe2\x86\x92"), size_t{1});      // →
  CHECK_EQ(utf16_length("\xf0\x9f\x9a\x80"), size_t{2});  // 🚀, a surrogate pair
  CHECK_EQ(utf16_length("a\xf0\x9f\x9a\x80\xc3\xbc"), size_t{4});
}

TEST_CASE("event_human: columns widen to what they showed, up to 40 units; longer texts push the line along") {
  HumanColumns columns(false);
  columns.set_clock(0, 0);
  std::string out;
  columns.append_line(out, 0, texts("np"), nullptr);
  CHECK_EQ(out, std::string("00:00:00.000000  DROP    np  shop  a \xe2\x86\x92 b  -  eth0  Dropped\n"));
  out.clear();
  columns.append_line(out, 1'500'000, texts("n\xf0\x9f\x9a\x80"), nullptr);
  // The policy column is 3 units wide now (🚀 is two); "np" is padded to it below.
  CHECK_EQ(out, std::string("00:00:00.001500  DROP    n\xf0\x9f\x9a\x80  shop  a \xe2\x86\x92 b  -  eth0  Dropped\n"));
  out.clear();
  columns.append_line(out, 0, texts("np"), nullptr);
  CHECK_EQ(out, std::string("00:00:00.000000  DROP    np   shop  a \xe2\x86\x92 b  -  eth0  Dropped\n"));
  const std::string long_policy(45, 'p');
  out.clear();
  columns.append_line(out, 0, texts(long_policy), nullptr);
  CHECK_EQ(out, "00:00:00.000000  DROP    " + long_policy + "  shop  a \xe2\x86\x92 b  -  eth0  Dropped\n");
  out.clear();
  columns.append_line(out, 0, texts("np"), nullptr);
  CHECK_EQ(out, "00:00:00.000000  DROP    np" + std::string(38, ' ') + "  shop  a \xe2\x86\x92 b  -  eth0  Dropped\n");
}

TEST_CASE("event_human: the clock is the time of day it was told for the line's second, with its microseconds") {
  HumanColumns columns(false);
  std::string out;
  CHECK(!columns.has_clock(1'750'000'000));
  // 2025-06-15T15:06:40Z in St_John's summer time (UTC-2:30): 12:36:40.
  columns.set_clock(1'750'000'000, 12 * 3600 + 36 * 60 + 40);
  CHECK(columns.has_clock(1'750'000'000));
  CHECK(!columns.has_clock(1'750'000'001));
  columns.append_line(out, 1'750'000'000'123'456'789ull, texts("np"), nullptr);
  CHECK_EQ(out.substr(0, 15), std::string("12:36:40.123456"));
  out.clear();
  columns.set_clock(1'750'000'001, 86399);
  columns.append_line(out, 1'750'000'001'000'000'999ull, texts("np"), nullptr);
  CHECK_EQ(out.substr(0, 15), std::string("23:59:59.000000"));
}

TEST_CASE("event_human: in colour, the verdict's colour around its padded column, the separator after") {
  HumanColumns columns(true);
  columns.set_clock(0, 0);
  std::string out;
  HumanTexts t = texts("np");
  t.verdict = event_human::kAllow;
  columns.append_line(out, 0, t, nullptr);
  CHECK_EQ(out.substr(15), std::string("  \x1b[32mALLOW \x1b[0m  np  shop  a \xe2\x86\x92 b  -  eth0  Dropped\n"));
  out.clear();
  t.verdict = event_human::kVerdicts + 3;  // out of range: unknown
  columns.append_line(out, 0, t, nullptr);
  CHECK_EQ(out.substr(15, 16), std::string("  \x1b[2m?     \x1b[0m"));
}

TEST_CASE("event_human: a line that overflowed its LineOut is written again with the same bytes") {
  HumanColumns columns(false);
  columns.set_clock(0, 0);
  std::string whole;
  HumanColumns twin(false);
  twin.set_clock(0, 0);
  twin.append_line(whole, 42, texts(std::string(30, 'x')), nullptr);
  uint8_t small[20];
  LineOut cut(small, small + sizeof small);
  columns.append_line(cut, 42, texts(std::string(30, 'x')), nullptr);
  CHECK(cut.overflowed());
  std::string again;
  columns.append_line(again, 42, texts(std::string(30, 'x')), nullptr);
  CHECK_EQ(again, whole);
}

}  // namespace
}  // namespace ovnpsample::testing
