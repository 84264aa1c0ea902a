#include "render/event_human.h"

#include <cstring>

#include "packet/packet_decoder.h"
#include "packet/packet_text.h"
#include "render/decimal.h"
#include "render/line_out.h"

namespace ovnpsample {

namespace {

struct VerdictText {
  std::string_view text;
  std::string_view colour;
};

constexpr VerdictText kVerdictTexts[] = {
#define OVNPSAMPLE_HUMAN_VERDICT(id, name, text, colour) {text, colour},
    OVNPSAMPLE_HUMAN_VERDICTS(OVNPSAMPLE_HUMAN_VERDICT)
#undef OVNPSAMPLE_HUMAN_VERDICT
};

constexpr std::string_view kReset = "\x1b[0m";
constexpr std::string_view kSeparator = "  ";
constexpr std::string_view kSpaces = "                                        ";
static_assert(kSpaces.size() == event_human::kMaxColumn);

void two_digits(char* at, int value) {
  at[0] = static_cast<char>('0' + value / 10);
  at[1] = static_cast<char>('0' + value % 10);
}

}  // namespace

size_t utf16_length(std::string_view utf8) {
  size_t length = 0;
  for (const char c : utf8) {
    const auto byte = static_cast<uint8_t>(c);
    // A continuation byte adds nothing; a four-byte sequence is a surrogate pair.
    length += (byte & 0xc0) != 0x80 ? 1 : 0;
    length += byte >= 0xf0 ? 1 : 0;
  }
  return length;
}

void HumanColumns::set_clock(uint64_t second, uint32_t seconds_of_day) {
  clock_second_ = second;
  seconds_of_day %= 86400;
  two_digits(clock_, static_cast<int>(seconds_of_day / 3600));
  clock_[2] = ':';
  two_digits(clock_ + 3, static_cast<int>(seconds_of_day / 60 % 60));
  clock_[5] = ':';
  two_digits(clock_ + 6, static_cast<int>(seconds_of_day % 60));
}

template <typename Out>
void HumanColumns::column(Out& out, size_t index, std::string_view text, size_t length, std::string_view close) {
  size_t& width = widths_[index];
  if (length > width) width = length < event_human::kMaxColumn ? length : event_human::kMaxColumn;
  out += text;
  if (length < width) out += kSpaces.substr(0, width - length);
  out += close;
  out += kSeparator;
}

template <typename Out>
void HumanColumns::append_line(Out& out, uint64_t timestamp_ns, const HumanTexts& texts, const DecodedPacket* packet) {
  // HH:MM:SS.uuuuuu: the microseconds written with a leading 1 over the '.', which then goes back.
  char time[15];
  std::memcpy(time, clock_, sizeof clock_);
  write_decimal(time + 8, timestamp_ns % 1000000000 / 1000 + 1000000, 7);
  time[8] = '.';
  column(out, 0, std::string_view(time, sizeof time), sizeof time);

  const VerdictText& verdict =
      kVerdictTexts[texts.verdict < event_human::kVerdicts ? texts.verdict : event_human::kUnknown];
  if (color_) {
    out += verdict.colour;
    column(out, 1, verdict.text, verdict.text.size(), kReset);
  } else {
    column(out, 1, verdict.text, verdict.text.size());
  }
  column(out, 2, texts.policy);
  column(out, 3, texts.namespace_text);
  column(out, 4, texts.sides);
  if (packet == nullptr) {
    column(out, 5, "-", 1);
  } else {
    tuple_.clear();
    append_packet_tuple(tuple_, *packet);
    column(out, 5, tuple_);
  }
  column(out, 6, texts.interface);
  out += texts.sentence;
  out += '\n';
}

template void HumanColumns::append_line(std::string&, uint64_t, const HumanTexts&, const DecodedPacket*);
template void HumanColumns::append_line(LineOut&, uint64_t, const HumanTexts&, const DecodedPacket*);

}  // namespace ovnpsample
