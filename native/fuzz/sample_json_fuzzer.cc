// libFuzzer target for the sample line renderer (../sample_lines.h) in both formats, JSON
// (../sample_json.h) and text (../sample_text.h): datagrams through the parser and
// SampleBatch::append into a batch, as the reader thread builds it, then some of the batch's
// bytes overwritten (a batch whose records lie), then the whole batch rendered as LineRenderer
// does it for JavaScript, once per format: in an output of a given room (taken again when out of
// room), with events set when the renderer misses one. Traps when a JSON line is not one JSON
// value, when a text line holds anything but printable ASCII (no NUL, no line break inside) or
// does not end with its event, when a line does not end in '\n', when the lines and the counts
// disagree, or when an intact batch stops early; AddressSanitizer traps any read outside the batch.
//
// Input format:
//   byte 0   bit 0: samples only (group events skipped); bit 1: with events
//   byte 1   output room in units of 64 bytes (0: 1 MiB)
//   byte 2   how many byte changes follow, each a u16 offset (modulo the batch size) and a u8 value
//   changes
// then datagrams until the input ends, as datagram_batch_input.h reads them (the nsid kept when
// the datagram has one; the other flags ignored).
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "datagram_batch_input.h"
#include "render/sample_lines.h"
#include "wire/psample_parser.h"
#include "wire/sample_batch.h"

namespace {

using namespace ovnpsample;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "sample_json: %s\n", what.c_str());
  __builtin_trap();
}

// RFC 8259, strictly: one value, nothing but whitespace around it.
class JsonChecker {
 public:
  explicit JsonChecker(std::string_view text) : text_(text) {}

  bool whole() {
    skip_space();
    if (!value(0)) return false;
    skip_space();
    return at_ == text_.size();
  }

 private:
  bool value(int depth) {
    if (depth > 64 || at_ >= text_.size()) return false;
    switch (text_[at_]) {
      case '{':
        return object(depth);
      case '[':
        return array(depth);
      case '"':
        return string();
      case 't':
        return word("true");
      case 'f':
        return word("false");
      case 'n':
        return word("null");
      default:
        return number();
    }
  }

  bool object(int depth) {
    at_++;
    skip_space();
    if (take('}')) return true;
    do {
      skip_space();
      if (!string()) return false;
      skip_space();
      if (!take(':')) return false;
      skip_space();
      if (!value(depth + 1)) return false;
      skip_space();
    } while (take(','));
    return take('}');
  }

  bool array(int depth) {
    at_++;
    skip_space();
    if (take(']')) return true;
    do {
      skip_space();
      if (!value(depth + 1)) return false;
      skip_space();
    } while (take(','));
    return take(']');
  }

  bool string() {
    if (!take('"')) return false;
    while (at_ < text_.size()) {
      const auto c = static_cast<unsigned char>(text_[at_++]);
      if (c == '"') return true;
      if (c < 0x20) return false;
      if (c != '\\') continue;
      if (at_ >= text_.size()) return false;
      const char escaped = text_[at_++];
      if (escaped == 'u') {
        for (int i = 0; i < 4; i++) {
          if (at_ >= text_.size() || !std::isxdigit(static_cast<unsigned char>(text_[at_++]))) return false;
        }
      } else if (std::string_view("\"\\/bfnrt").find(escaped) == std::string_view::npos) {
        return false;
      }
    }
    return false;
  }

  bool number() {
    take('-');
    if (take('0')) {
    } else if (!digits()) {
      return false;
    }
    if (take('.') && !digits()) return false;
    if (take('e') || take('E')) {
      if (!take('+')) take('-');
      if (!digits()) return false;
    }
    return true;
  }

  bool digits() {
    const size_t start = at_;
    while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') at_++;
    return at_ > start;
  }

  bool word(std::string_view w) {
    if (text_.substr(at_, w.size()) != w) return false;
    at_ += w.size();
    return true;
  }

  bool take(char c) {
    if (at_ < text_.size() && text_[at_] == c) {
      at_++;
      return true;
    }
    return false;
  }

  void skip_space() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r'))
      at_++;
  }

  std::string_view text_;
  size_t at_ = 0;
};

// The text events (ASCII, so that a line can be checked byte by byte) end with this.
constexpr std::string_view kTextEventEnd = " |end";

void check_text_line(std::string_view line, bool with_events) {
  for (const char c : line) {
    if (c < 0x20 || c > 0x7e) fail("a text line holds a byte that is not printable ASCII: " + std::string(line));
  }
  if (with_events &&
      (line.size() < kTextEventEnd.size() || line.substr(line.size() - kTextEventEnd.size()) != kTextEventEnd))
    fail("a text line does not end with its event: " + std::string(line));
}

void check_lines(LineFormat format, bool with_events, const uint8_t* bytes, size_t size, uint32_t lines) {
  const std::string_view text(reinterpret_cast<const char*>(bytes), size);
  uint32_t seen = 0;
  size_t start = 0;
  for (size_t end = text.find('\n'); end != std::string_view::npos; end = text.find('\n', start)) {
    const std::string_view line = text.substr(start, end - start);
    if (format == LineFormat::kText)
      check_text_line(line, with_events);
    else if (!JsonChecker(line).whole())
      fail("a line is not JSON: " + std::string(line));
    seen++;
    start = end + 1;
  }
  if (start != text.size()) fail("the output does not end with a whole line");
  if (seen != lines) fail("the lines written and the lines counted differ");
}

uint32_t cookie_id(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

// Renders the whole batch in the format as JavaScript does, checking every output.
void render_all(LineFormat format, const SampleBatch& batch, const std::vector<Message>& events, bool samples_only,
                bool with_events, size_t room, bool intact) {
  SampleLineRenderer renderer(format);
  RenderRequest request;
  request.batch = batch.bytes.data();
  request.batch_size = batch.size();
  request.count = batch.count;
  request.little_endian = layout::kLittleEndian;
  request.samples_only = samples_only;
  request.with_events = with_events;
  std::vector<uint8_t> out(room);
  RenderCursor cursor;
  uint32_t lines = 0;
  for (;;) {
    const RenderResult result = renderer.render(request, cursor, out.data(), out.size());
    if (result.written > out.size()) fail("wrote past its room");
    check_lines(format, with_events, out.data(), result.written, result.lines);
    lines += result.lines;
    if (result.stop == RenderStop::kEnd || result.stop == RenderStop::kMalformed) {
      if (result.stop == RenderStop::kMalformed && intact) fail("an intact batch was called malformed");
      if (result.stop == RenderStop::kEnd && result.next.index != batch.count) fail("ended before the last record");
      break;
    }
    if (result.stop == RenderStop::kMissingEvent) {
      if (!with_events || result.next.index >= events.size()) fail("missed an event it was not asked for");
      // The event of the record it stopped at, read from the record as JavaScript would.
      const uint8_t* r = batch.bytes.data() + result.next.offset;
      uint32_t cookie_offset = 0;
      uint32_t cookie_length = 0;
      std::memcpy(&cookie_offset, r + layout::record::kCookieOffset, sizeof cookie_offset);
      std::memcpy(&cookie_length, r + layout::record::kCookieLength, sizeof cookie_length);
      const std::string event = format == LineFormat::kJson
                                    ? "{\"record\":" + std::to_string(result.next.index) + ",\"text\":\"\\u00fc\\n\"}"
                                    : " | record " + std::to_string(result.next.index) + std::string(kTextEventEnd);
      if (cookie_length == 8)
        renderer.events().set(cookie_id(r + cookie_offset), cookie_id(r + cookie_offset + 4), event);
      else
        renderer.events().set_for_cookie_length(cookie_length, event);
    } else if (result.stop == RenderStop::kNoRoom) {
      if (result.needed <= out.size() - result.written) fail("out of room with room left");
      if (result.needed > out.size()) out.resize(result.needed);
    } else {
      fail("stopped at a line limit it was not given");
    }
    cursor = result.next;
  }
  if (intact) {
    uint32_t expected = 0;
    // As PsampleSample.command reads it: get/new/del-group are group events, any other command a sample.
    for (const Message& m : events) expected += !samples_only || m.cmd == 0 || m.cmd > 3;
    if (lines != expected) fail("an intact batch did not render a line per message");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t size) {
  if (size < 3) return 0;
  const bool samples_only = (input[0] & 1) != 0;
  const bool with_events = (input[0] & 2) != 0;
  const size_t room = input[1] == 0 ? size_t{1} << 20 : size_t{64} * input[1];
  const size_t changes = input[2];
  size_t at = 3 + 3 * changes;
  if (at > size) return 0;

  SampleBatch batch;
  std::vector<Message> messages;
  std::vector<Message> events;  // what was appended, in order
  fuzzing::FuzzDatagram d;
  while ((at = fuzzing::read_datagram(input, size, at, d)) != 0) {
    messages.clear();
    Stats stats{};
    parse_datagram(d.data, d.length, 0, messages, stats);
    for (const Message& m : messages) {
      if (m.kind != MessageKind::kSample && m.kind != MessageKind::kGroup) continue;
      batch.append(m, d.data, d.has_nsid, d.nsid);
      events.push_back(m);
    }
  }
  const bool intact = changes == 0 || batch.bytes.empty();
  for (size_t i = 0; i < changes && !batch.bytes.empty(); i++) {
    const size_t offset = fuzzing::read_host<uint16_t>(input + 3 + 3 * i) % batch.bytes.size();
    batch.bytes[offset] = input[3 + 3 * i + 2];
  }

  for (const LineFormat format : {LineFormat::kJson, LineFormat::kText})
    render_all(format, batch, events, samples_only, with_events, room, intact);
  return 0;
}
