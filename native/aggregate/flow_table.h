// watch --aggregate's per-packet work, done where the batches are: a delivered batch's samples
// grouped into packets by the grouping rule's native definition (aggregate/packet_grouper.h), each
// packet summed into a native flow, and only the flows touched since the last drain handed to
// JavaScript. TypeScript turns a flow's key into its verdict chain and endpoints
// once (src/events/native-flows.ts) and sums the counts into FlowAggregator, which keys them as it
// keys single packets: the key here is at least as fine as FlowAggregator's (the packet_fields
// words it derives its fields from, verbatim), so no field is derived twice.
// Pure C++17 (no N-API).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "aggregate/packet_grouper.h"
#include "packet/packet_fields.h"
#include "wire/batch_record.h"

// X(identifier, JavaScript name, slot) of a drained flow's numbers (FlowTable::kCountSlots each).
#define OVNPSAMPLE_FLOW_COUNT_SLOTS(X)                                                   \
  X(kFlowId, id, 0)                                                                      \
  X(kSampledPackets, sampledPackets, 1)                                                  \
  X(kSamples, samples, 2)                                                                \
  X(kPackets, packets, 3) /* packets on the wire they stand for (packets_sampled_by) */  \
  X(kFirstNs, firstNs, 4) /* kernel time (or arrival time) of the earliest packet, ns */ \
  X(kLastNs, lastNs, 5)

// X(identifier, JavaScript name, slot) of the table's counters, as a drain leaves them.
#define OVNPSAMPLE_FLOW_TABLE_STATS(X)                                                                        \
  X(kOverflowSampledPackets, overflowSampledPackets, 0) /* since the last drain: their flow found no room */  \
  X(kOverflowSamples, overflowSamples, 1)                                                                     \
  X(kOverflowPackets, overflowPackets, 2)                                                                     \
  X(kMalformedRecords, malformedRecords, 3) /* since the table was made: records outside their batch, and the \
                                               records after them, skipped */                                 \
  X(kPending, pending, 4)                   /* packets waiting in the grouping window */                      \
  X(kFlows, flows, 5)                       /* flows held in this interval */

namespace ovnpsample {

namespace flow_table {
#define OVNPSAMPLE_FLOW_SLOT(id, name, index) inline constexpr uint32_t id = index;
OVNPSAMPLE_FLOW_COUNT_SLOTS(OVNPSAMPLE_FLOW_SLOT)
OVNPSAMPLE_FLOW_TABLE_STATS(OVNPSAMPLE_FLOW_SLOT)
#undef OVNPSAMPLE_FLOW_SLOT
inline constexpr uint32_t kCountSlots = 6;
inline constexpr uint32_t kStatSlots = 6;
}  // namespace flow_table

// The packets on the wire a sample stands for: 1 in `rate`, or with psample's probability flag
// 1 / (rate / (2^32 - 1)); a rate of 0 says nothing, the sample stands for itself. The rule's one
// definition: src/events/event-samples.ts packetsSampledBy is checked against it
// (test/events/native-flows.test.ts). A packet stands for what its first sample says.
double packets_sampled_by(uint32_t rate, bool probability);

struct FlowTableOptions {
  // Samples of one packet within this window are one packet; 0: every sample is a packet.
  double group_window_ms = 50;
  // Flows held per interval; the packets of further flows are counted as overflow.
  size_t max_flows = 40'000;
  // Keys the source port too (a --port filter reads it).
  bool by_source_port = false;
};

// A flow: the packets of one interval with the same key. Its key is what the first packet said.
struct NativeFlow {
  uint32_t id = 0;
  uint32_t group = 0;
  // Each sample's cookie in order: its length (u32, host order), then its bytes (none: length 0).
  std::string cookies;
  // The first packet's fields; its srcText and dstText point into `texts`.
  uint32_t words[packet_fields::kWords] = {};
  std::string texts;
  double sampled_packets = 0;
  double samples = 0;
  double packets = 0;
  double first_ns = 0;
  double last_ns = 0;
  // Whether JavaScript was given its key.
  bool announced = false;
};

class FlowTable {
 public:
  explicit FlowTable(const FlowTableOptions& options) : options_(options), grouper_(options.group_window_ms) {}

  // Takes the `count` records of a batch that arrived at `now_ms` (a monotonic clock, the one
  // deadlines are kept on; `wall_ms`: the epoch time, for samples without a kernel time). Group
  // events are skipped, as the per-packet path skips them. Packets whose window passed by
  // `now_ms` are completed first.
  void add(const Batch& batch, uint32_t count, double now_ms, double wall_ms);

  // Samples that are not in a batch (the reader thread's, straight from its receive buffers):
  // start_run() completes the packets whose window passed by `now_ms` and starts a run (as a
  // batch is one, packet_grouper.h); add() groups one sample of it.
  void start_run(double now_ms);
  void add(const SampleToGroup& sample, double now_ms, double wall_ms);

  // Completes the packets whose window passed by `now_ms` (all of them when `final`), then calls
  // visit(const NativeFlow&) for each flow touched since the last drain, in the order they were
  // first touched (marking it announced after the call), and clears their counts. With
  // `end_interval` the flows are forgotten after the visit: the next interval starts empty (ids go
  // on counting, never reused).
  template <typename Visit>
  void drain(double now_ms, bool final, bool end_interval, Visit&& visit) {
    release(final ? PacketGrouper::kForever : now_ms);
    for (const uint32_t index : touched_) {
      NativeFlow& flow = flows_[index];
      visit(static_cast<const NativeFlow&>(flow));
      flow.announced = true;
      flow.sampled_packets = flow.samples = flow.packets = 0;
    }
    touched_.clear();
    if (end_interval) {
      flows_.clear();
      index_.clear();
    }
  }

  // Counters (flow_table::kStatSlots): the overflow since the last call to take_stats().
  void take_stats(double* out);

  size_t pending() const { return grouper_.pending(); }

 private:
  void release(double now_ms);
  void complete(const GroupedPacket& packet);

  FlowTableOptions options_;
  PacketGrouper grouper_;

  std::vector<NativeFlow> flows_;
  std::unordered_map<std::string, uint32_t> index_;
  std::vector<uint32_t> touched_;
  uint32_t next_id_ = 0;
  std::string key_;

  double overflow_sampled_packets_ = 0;
  double overflow_samples_ = 0;
  double overflow_packets_ = 0;
};

}  // namespace ovnpsample
