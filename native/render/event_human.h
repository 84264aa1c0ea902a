// watch's human line, the one writer of it (per released packet in watch_lines.cc, per event
// through napi/addon_event_human.cc):
//
//   CLOCK  VERDICT  POLICY  NAMESPACE  SRC → DST  TUPLE  INTERFACE  SENTENCE
//
// CLOCK is the packet's time of day HH:MM:SS.micro in the local time zone as JavaScript's Date
// says it (TZ, ICU's zone data: the node's C library may have none, as in the image), told once
// per second by set_clock(); VERDICT coloured when asked; TUPLE packet_text.h's, "-"
// without the packet's bytes. The other texts are the database's and the node's, made and
// escaped by JavaScript once per route or event (src/output/control-text.ts: nothing here
// escapes). Each column but the sentence widens to fit what it has shown, up to kMaxColumn;
// longer values push the line along. Widths count UTF-16 code units, as JavaScript's
// String.length does: the texts are UTF-8 and may be anything but control characters.
// Pure C++17 (no N-API).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ovnpsample {

struct DecodedPacket;

// X(identifier, JavaScript name, column text, colour) of a verdict, as src/events/verdict.ts names them.
#define OVNPSAMPLE_HUMAN_VERDICTS(X)       \
  X(kAllow, allow, "ALLOW", "\x1b[32m")    \
  X(kDrop, drop, "DROP", "\x1b[31m")       \
  X(kPass, pass, "PASS", "\x1b[33m")       \
  X(kReject, reject, "REJECT", "\x1b[31m") \
  X(kUnknown, unknown, "?", "\x1b[2m")

namespace event_human {
enum Verdict : uint32_t {
#define OVNPSAMPLE_HUMAN_VERDICT(id, name, text, colour) id,
  OVNPSAMPLE_HUMAN_VERDICTS(OVNPSAMPLE_HUMAN_VERDICT)
#undef OVNPSAMPLE_HUMAN_VERDICT
      kVerdicts
};
inline constexpr size_t kMaxColumn = 40;
inline constexpr size_t kColumns = 7;
}  // namespace event_human

// A line's texts from the database and the node, escaped (control-text.ts).
struct HumanTexts {
  uint32_t verdict = event_human::kUnknown;
  std::string_view policy;
  std::string_view namespace_text;
  // "SRC → DST"
  std::string_view sides;
  std::string_view interface;
  std::string_view sentence;
};

// A line's texts kept (a route's, or a per-event writer's by id).
struct HumanLineTexts {
  uint32_t verdict = event_human::kUnknown;
  std::string policy;
  std::string namespace_text;
  std::string sides;
  std::string interface;
  std::string sentence;

  HumanTexts view() const { return HumanTexts{verdict, policy, namespace_text, sides, interface, sentence}; }
};

// The UTF-16 code units of UTF-8 text (as String.length counts the string it decodes to; a
// malformed byte counts one, as its U+FFFD does).
size_t utf16_length(std::string_view utf8);

// The columns' widths and the clock, shared by the lines of one output.
class HumanColumns {
 public:
  explicit HumanColumns(bool color) : color_(color) {}

  // Whether the local time of day of `second` (since the epoch) is known: the last set_clock()'s.
  bool has_clock(uint64_t second) const { return second == clock_second_; }
  // The local time of day of `second`, in seconds since local midnight (below 86,400).
  void set_clock(uint64_t second, uint32_t seconds_of_day);

  // Appends the line of a packet at `timestamp_ns` (ns since the epoch), '\n' included, once
  // has_clock() is true for its second. `packet`: null without the packet's bytes. Out:
  // std::string or LineOut; writing a line again (after LineOut overflowed) writes the same bytes.
  template <typename Out>
  void append_line(Out& out, uint64_t timestamp_ns, const HumanTexts& texts, const DecodedPacket* packet);

 private:
  template <typename Out>
  // `text` padded to its column's width, which grows to fit it, then `close` (a colour's end) and the separator.
  void column(Out& out, size_t index, std::string_view text, size_t length, std::string_view close = {});
  template <typename Out>
  void column(Out& out, size_t index, std::string_view text) {
    column(out, index, text, utf16_length(text));
  }
  bool color_;
  size_t widths_[event_human::kColumns] = {0, 6, 0, 0, 0, 0, 0};
  // The local HH:MM:SS of clock_second_: packets come many to a second, in time order.
  uint64_t clock_second_ = ~uint64_t{0};
  char clock_[8] = {};
  std::string tuple_;
};

}  // namespace ovnpsample
