// watch's human line (../render/event_human.h): widths counted as String.length counts them,
// widening up to 40, the local clock in the TZ given, the colour around the verdict's column, "-"
// without the packet, and the same bytes written again after a LineOut overflowed. The whole line
// against the TypeScript formatter it replaced: test/output/human-golden.test.ts.
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <string>

#include "check.h"
#include "render/event_human.h"
#include "render/line_out.h"

namespace ovnpsample::testing {
namespace {

// Sets TZ for the process, as node does when process.env.TZ is set; puts the old one back.
class ZoneScope {
 public:
  explicit ZoneScope(const char* zone) {
    const char* old = std::getenv("TZ");
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv("TZ", zone, 1);
    tzset();
  }
  ~ZoneScope() {
    if (had_) {
      setenv("TZ", old_.c_str(), 1);
    } else {
      unsetenv("TZ");
    }
    tzset();
  }
  ZoneScope(const ZoneScope&) = delete;
  ZoneScope& operator=(const ZoneScope&) = delete;

 private:
  bool had_ = false;
  std::string old_;
};

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
  const ZoneScope utc("UTC");
  HumanColumns columns(false);
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

TEST_CASE("event_human: the local clock of the TZ set, half-hour zones and summer time included") {
  HumanColumns columns(false);
  std::string out;
  {
    const ZoneScope kolkata("Asia/Kolkata");
    // 2025-06-15T15:06:40.123456789Z is 20:36:40 in Kolkata (UTC+5:30).
    columns.append_line(out, 1'750'000'000'123'456'789ull, texts("np"), nullptr);
    CHECK_EQ(out.substr(0, 15), std::string("20:36:40.123456"));
  }
  {
    const ZoneScope st_johns("America/St_Johns");
    HumanColumns fresh(false);
    out.clear();
    // The same instant in St_John's summer time (UTC-2:30); then one in its winter (UTC-3:30).
    fresh.append_line(out, 1'750'000'000'123'456'789ull, texts("np"), nullptr);
    CHECK_EQ(out.substr(0, 15), std::string("12:36:40.123456"));
    out.clear();
    fresh.append_line(out, 1'767'225'600'000'000'999ull, texts("np"), nullptr);  // 2026-01-01T00:00:00Z
    CHECK_EQ(out.substr(0, 15), std::string("20:30:00.000000"));
  }
}

TEST_CASE("event_human: in colour, the verdict's colour around its padded column, the separator after") {
  const ZoneScope utc("UTC");
  HumanColumns columns(true);
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
  const ZoneScope utc("UTC");
  HumanColumns columns(false);
  std::string whole;
  HumanColumns twin(false);
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
