#include "aggregate/flow_table.h"

#include <algorithm>

namespace ovnpsample {

namespace {

// psample's probability is scaled to this: 2^32 - 1 stands for 1 (include/uapi/linux/psample.h).
constexpr double kProbabilityOne = 4294967295.0;

}  // namespace

double packets_sampled_by(uint32_t rate, bool probability) {
  if (rate == 0) return 1;
  return probability ? kProbabilityOne / rate : static_cast<double>(rate);
}

void FlowTable::add(const Batch& batch, uint32_t count, double now_ms, double wall_ms) {
  release(now_ms);
  grouper_.add(batch, count, now_ms, wall_ms);
  if (options_.group_window_ms <= 0) release(PacketGrouper::kForever);
}

void FlowTable::start_run(double now_ms) {
  release(now_ms);
  grouper_.start_run();
}

void FlowTable::add(const SampleToGroup& sample, double now_ms, double wall_ms) {
  grouper_.add(sample, now_ms, wall_ms);
  if (options_.group_window_ms <= 0) release(PacketGrouper::kForever);
}

void FlowTable::release(double now_ms) {
  grouper_.release(now_ms, [this](const GroupedPacket& packet) { complete(packet); });
}

void FlowTable::complete(const GroupedPacket& packet) {
  namespace word = packet_fields;
  const double packets = packets_sampled_by(packet.rate, packet.probability);
  std::string& key = key_;
  key.clear();
  append_packet_key(key, packet, packet.words[word::kIcmp], options_.by_source_port);

  auto found = index_.find(key);
  if (found == index_.end()) {
    if (flows_.size() >= options_.max_flows) {
      overflow_sampled_packets_++;
      overflow_samples_ += packet.samples;
      overflow_packets_ += packets;
      return;
    }
    found = index_.emplace(key, static_cast<uint32_t>(flows_.size())).first;
    NativeFlow& flow = flows_.emplace_back();
    flow.id = next_id_++;
    flow.group = packet.group;
    flow.cookies = packet.cookies;
    std::copy(packet.words, packet.words + word::kWords, flow.words);
    append_address_texts(packet, flow.words, flow.texts);
  }
  NativeFlow& flow = flows_[found->second];
  if (flow.sampled_packets == 0) {
    touched_.push_back(found->second);
    flow.first_ns = flow.last_ns = packet.time_ns;
  }
  flow.sampled_packets++;
  flow.samples += packet.samples;
  flow.packets += packets;
  flow.first_ns = std::min(flow.first_ns, packet.time_ns);
  flow.last_ns = std::max(flow.last_ns, packet.time_ns);
}

void FlowTable::take_stats(double* out) {
  namespace slot = flow_table;
  out[slot::kOverflowSampledPackets] = overflow_sampled_packets_;
  out[slot::kOverflowSamples] = overflow_samples_;
  out[slot::kOverflowPackets] = overflow_packets_;
  out[slot::kMalformedRecords] = grouper_.malformed_records();
  out[slot::kPending] = static_cast<double>(grouper_.pending());
  out[slot::kFlows] = static_cast<double>(flows_.size());
  overflow_sampled_packets_ = overflow_samples_ = overflow_packets_ = 0;
}

}  // namespace ovnpsample
