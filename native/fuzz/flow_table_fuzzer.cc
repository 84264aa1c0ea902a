// libFuzzer target for watch --aggregate's native flows (../aggregate/flow_table.h): datagrams
// through the parser and SampleBatch::append, each datagram's messages a batch of their own as the
// reader thread hands them over, some of each batch's bytes overwritten (a batch whose records
// lie), each batch added to the table 10 ms after the previous one, drained whenever the input
// says, then drained whole. Traps when, with intact batches, the samples drained (in flows and in
// overflow) are not the samples appended, when a packet stays pending after the final drain, when
// the table holds more flows than its cap or a drained flow has no packet; AddressSanitizer traps
// any read outside a batch. A second table is fed each datagram's samples straight from it, one
// run per datagram, as the reader thread feeds it (FlowTable::start_run, sample_to_group): with
// intact batches it must drain the same flows, keys and counts, drain by drain.
//
// Input format:
//   byte 0   the grouping window in ms (0: every sample is a packet)
//   byte 1   the flow cap minus 1
//   byte 2   bit 0: the source port is keyed
//   byte 3   how many byte changes follow, each a u16 offset (modulo the batch size) and a u8 value
//   changes
// then datagrams until the input ends, as datagram_batch_input.h reads them (the nsid kept when
// the datagram has one; "JavaScript takes" (bit 3) drains the table before the datagram's batch).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "aggregate/flow_table.h"
#include "datagram_batch_input.h"
#include "wire/psample_parser.h"
#include "wire/sample_batch.h"

namespace {

using namespace ovnpsample;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "flow_table: %s\n", what.c_str());
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t size) {
  constexpr size_t kHeader = 4;
  constexpr double kWallMs = 1'750'000'000'000.0;
  if (size < kHeader) return 0;
  FlowTableOptions options;
  options.group_window_ms = input[0];
  options.max_flows = size_t{input[1]} + 1;
  options.by_source_port = (input[2] & 1) != 0;
  const size_t changes = input[3];
  size_t at = kHeader + 3 * changes;
  if (at > size) return 0;

  FlowTable table(options);
  FlowTable fed(options);
  using Drained = std::tuple<uint32_t, std::string, std::string, double, double, double, double, double>;
  std::vector<Drained> drained;
  std::vector<Drained> drained_fed;
  const auto keep = [](std::vector<Drained>& into) {
    return [&into](const NativeFlow& f) {
      into.emplace_back(f.id, f.cookies, f.texts, f.sampled_packets, f.samples, f.packets, f.first_ns, f.last_ns);
    };
  };
  double samples_in = 0;
  double samples_out = 0;
  bool intact = true;
  const auto drain = [&](double now_ms, bool final) {
    table.drain(now_ms, final, false, [&](const NativeFlow& flow) {
      if (flow.sampled_packets < 1 || flow.samples < flow.sampled_packets) fail("a drained flow has no packet");
      samples_out += flow.samples;
      keep(drained)(flow);
    });
    fed.drain(now_ms, final, false, keep(drained_fed));
    double stats[flow_table::kStatSlots];
    table.take_stats(stats);
    samples_out += stats[flow_table::kOverflowSamples];
    if (stats[flow_table::kMalformedRecords] > 0) intact = false;
    if (stats[flow_table::kFlows] > static_cast<double>(options.max_flows)) fail("more flows than the cap");
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
      if (m.cmd == kCmdSample || m.cmd >= 4) samples_in++;  // as Record::is_sample reads a command
    }
    for (size_t i = 0; i < changes && !batch.bytes.empty(); i++) {
      const size_t offset = fuzzing::read_host<uint16_t>(input + kHeader + 3 * i) % batch.bytes.size();
      batch.bytes[offset] = input[kHeader + 3 * i + 2];
      intact = false;
    }
    if (d.take_before) drain(now_ms, false);
    table.add(Batch{batch.bytes.data(), batch.bytes.size(), false}, batch.count, now_ms, kWallMs);
    fed.start_run(now_ms);
    for (const Message& m : messages)
      if (m.kind == MessageKind::kSample) fed.add(sample_to_group(m, d.data), now_ms, kWallMs);
    now_ms += 10;
  }
  drain(now_ms, true);
  if (table.pending() != 0) fail("packets pending after the final drain");
  if (intact && samples_in != samples_out)
    fail("samples appended " + std::to_string(samples_in) + " but drained " + std::to_string(samples_out));
  if (intact && drained != drained_fed) fail("the samples fed one by one drained other flows than their batches");
  return 0;
}
