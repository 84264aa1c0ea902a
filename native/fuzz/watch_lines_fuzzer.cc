// libFuzzer target for watch's native JSON and human lines (../render/watch_lines.h): datagrams
// through the parser and SampleBatch::append, each datagram's messages a batch of their own as the
// reader thread hands them over, some of each batch's bytes overwritten (a batch whose records
// lie), each batch added 10 ms after the previous one, released whenever the input says, then
// released whole; every new route answered (accepted or not as the input says), the lines
// rendered into a small buffer that grows only when a line does not fit (the human line's local
// time of each second given when asked for). Traps when more packets
// are shown or filtered than released, when the lines written are not the packets shown, when a
// line does not end its own bytes, when --count's limit is passed, or when a packet stays pending
// after the final release; AddressSanitizer traps any read outside a batch or write outside the
// buffer.
//
// Input format:
//   byte 0   the grouping window in ms (0: every sample is a packet)
//   byte 1   packets to show (--count), 255: all
//   byte 2   bit 0: the source port is keyed; bit 1: routes whose id is a multiple of 3 are filtered out;
//            bit 2: the human line (../render/event_human.h); bit 3: in colour
//   byte 3   how many byte changes follow, each a u16 offset (modulo the batch size) and a u8 value
//   changes
// then datagrams until the input ends, as datagram_batch_input.h reads them (the nsid kept when
// the datagram has one; "JavaScript takes" (bit 3) releases before the datagram's batch).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "datagram_batch_input.h"
#include "render/watch_lines.h"
#include "wire/psample_parser.h"
#include "wire/sample_batch.h"

namespace {

using namespace ovnpsample;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "watch_lines: %s\n", what.c_str());
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t size) {
  constexpr size_t kHeader = 4;
  if (size < kHeader) return 0;
  WatchLinesOptions options;
  options.group_window_ms = input[0];
  options.by_source_port = (input[2] & 1) != 0;
  options.human = (input[2] & 4) != 0;
  options.color = (input[2] & 8) != 0;
  const bool filtering = (input[2] & 2) != 0;
  const double limit = input[1] == 255 ? std::numeric_limits<double>::infinity() : input[1];
  const size_t changes = input[3];
  size_t at = kHeader + 3 * changes;
  if (at > size) return 0;

  WatchLines lines(options);
  std::vector<uint8_t> out(256);
  double packets = 0;
  double shown = 0;
  double filtered = 0;
  double routed = 0;
  double lines_written = 0;
  const auto render = [&](const std::vector<uint32_t>& fresh) {
    for (const uint32_t index : fresh) {
      const WatchRoute& route = lines.route(index);
      WatchRouteAnswer answer;
      answer.accepted = !filtering || route.id % 3 != 0;
      answer.head = R"(,"verdict":"unknown","message":"")";
      answer.steps = R"(,"chain":[])";
      // Texts of every width class: ASCII, two and three UTF-8 bytes a unit, surrogate pairs, past 40 units.
      answer.human.verdict = route.id % event_human::kVerdicts;
      answer.human.policy = std::string(route.id % 50, 'p');
      answer.human.namespace_text = "ns\u00fc\u2192";
      answer.human.sides = route.id % 2 == 0 ? "a \u2192 b" : "\U0001F680 \u2192 " + std::string(route.id % 45, 'd');
      answer.human.interface = "if" + std::to_string(route.iifindex);
      answer.human.sentence = "Allowed";
      if (!lines.answer(route.id, answer)) fail("a new route could not be answered");
    }
    double n[watch_lines::kRenderSlots] = {};
    n[watch_lines::kRenderLimit] = limit - shown;  // shown: the releases before this one
    for (;;) {
      n[watch_lines::kRenderAt] = 0;
      if (!lines.render(out.data(), out.size(), n)) fail("a released packet's route has no answer");
      size_t newlines = 0;
      const auto end = static_cast<size_t>(n[watch_lines::kRenderAt]);
      if (end > out.size()) fail("the lines end past the buffer");
      for (size_t i = 0; i < end; i++) newlines += out[i] == '\n' ? 1 : 0;
      if (end > 0 && out[end - 1] != '\n') fail("a line does not end its bytes");
      lines_written += static_cast<double>(newlines);
      if (n[watch_lines::kRenderLeft] == 0) break;
      if (n[watch_lines::kRenderClock] >= 0) {
        // As JavaScript tells a second's local time (any time of day will do here).
        const auto second = static_cast<uint64_t>(n[watch_lines::kRenderClock]);
        lines.set_clock(second, static_cast<uint32_t>(second % 86400));
        continue;
      }
      if (n[watch_lines::kRenderNeeded] > static_cast<double>(out.size()))
        out.resize(static_cast<size_t>(n[watch_lines::kRenderNeeded]));
    }
    packets += n[watch_lines::kRenderPackets];
    filtered += n[watch_lines::kRenderFiltered];
    shown += n[watch_lines::kRenderShown];
    if (shown + filtered > packets) fail("more packets shown or filtered than released");
    if (lines_written != shown) fail("the lines written are not the packets shown");
    lines.take_counts([&](const WatchRoute& route) {
      if (route.sampled_packets < 1) fail("a counted route has no packet");
      routed += route.sampled_packets;
    });
    if (routed != packets) fail("the routes' packets are not the packets released");
    if (shown > limit) fail("more lines than --count allows");
    return n[watch_lines::kRenderPending];
  };

  std::vector<Message> messages;
  fuzzing::FuzzDatagram d;
  double now_ms = 0;
  while ((at = fuzzing::read_datagram(input, size, at, d)) != 0) {
    messages.clear();
    Stats stats{};
    parse_datagram(d.data, d.length, 0, messages, stats);
    SampleBatch batch;
    for (const Message& m : messages) {
      if (m.kind != MessageKind::kSample && m.kind != MessageKind::kGroup) continue;
      batch.append(m, d.data, d.has_nsid, d.nsid);
    }
    for (size_t i = 0; i < changes && !batch.bytes.empty(); i++) {
      const size_t offset = fuzzing::read_host<uint16_t>(input + kHeader + 3 * i) % batch.bytes.size();
      batch.bytes[offset] = input[kHeader + 3 * i + 2];
    }
    if (d.take_before) render(lines.release(now_ms, false));
    render(lines.add(Batch{batch.bytes.data(), batch.bytes.size(), false}, batch.count, now_ms, 1'750'000'000'000.0));
    now_ms += 10;
  }
  if (render(lines.release(now_ms, true)) != 0) fail("packets pending after the final release");
  return 0;
}
