#include "aggregate/flow_table.h"

#include <algorithm>
#include <cstring>

#include "packet/address_text.h"

namespace ovnpsample {

namespace {

// psample's probability is scaled to this: 2^32 - 1 stands for 1 (include/uapi/linux/psample.h).
constexpr double kProbabilityOne = 4294967295.0;

void append_u32(std::string& to, uint32_t value) { to.append(reinterpret_cast<const char*>(&value), sizeof value); }

// Copies the address a slot's word points to in the packet's data (offset << 8 | bytes, 4 or 16)
// to `to`; returns its bytes (0: none).
uint8_t copy_address(uint32_t word, const uint8_t* data, uint32_t length, uint8_t* to) {
  const uint32_t offset = word >> 8;
  const uint32_t bytes = word & 0xff;
  if ((bytes != 4 && bytes != 16) || offset > length || bytes > length - offset) return 0;
  std::memcpy(to, data + offset, bytes);
  return static_cast<uint8_t>(bytes);
}

// An address's text, as the decoder writes it.
void append_address_text(std::string& to, const uint8_t* address, uint8_t bytes) {
  if (bytes == 0) return;
  char text[kIpv6TextMax];
  to.append(text, bytes == 16 ? format_ipv6(text, address) : format_ipv4(text, address));
}

}  // namespace

double packets_sampled_by(uint32_t rate, bool probability) {
  if (rate == 0) return 1;
  return probability ? kProbabilityOne / rate : static_cast<double>(rate);
}

bool FlowTable::near(const Pending& p, int64_t datapath_key, double time_ns) const {
  // In doubles, as the TypeScript grouper compares them, so both agree at the window's edge.
  const double gap = time_ns - p.time_ns;
  const double window_ns = options_.group_window_ms * 1e6;
  return p.datapath_key == datapath_key && gap <= window_ns && gap >= -window_ns;
}

int64_t FlowTable::find(uint32_t hash, int64_t datapath_key, double time_ns, const uint8_t* data, uint32_t length,
                        int64_t same_bytes) const {
  if (same_bytes >= 0 && static_cast<uint64_t>(same_bytes) >= head_serial_ &&
      near(at(static_cast<uint64_t>(same_bytes)), datapath_key, time_ns))
    return same_bytes;
  if (buckets_.empty()) return -1;
  for (int64_t serial = buckets_[hash & (buckets_.size() - 1)]; serial >= 0;) {
    const Pending& p = at(static_cast<uint64_t>(serial));
    if (p.hash == hash && p.bytes.size() == length && near(p, datapath_key, time_ns) &&
        (length == 0 || std::memcmp(p.bytes.data(), data, length) == 0))
      return serial;
    serial = p.next_in_bucket;
  }
  return -1;
}

FlowTable::Pending& FlowTable::push() {
  if (pending_ == ring_.size()) {
    std::vector<Pending> ring(std::max<size_t>(ring_.size() * 2, kMinSlots));
    for (size_t i = 0; i < pending_; i++) ring[i] = std::move(ring_[(ring_head_ + i) & (ring_.size() - 1)]);
    ring_ = std::move(ring);
    ring_head_ = 0;
  }
  Pending& slot = ring_[(ring_head_ + pending_) & (ring_.size() - 1)];
  pending_++;
  return slot;
}

void FlowTable::chain(uint64_t serial) {
  Pending& packet = at(serial);
  packet.next_in_bucket = -1;
  int64_t* link = &buckets_[packet.hash & (buckets_.size() - 1)];
  while (*link >= 0) link = &at(static_cast<uint64_t>(*link)).next_in_bucket;
  *link = static_cast<int64_t>(serial);
}

void FlowTable::grow_buckets() {
  buckets_.assign(std::max<size_t>(buckets_.size() * 2, kMinSlots), -1);
  for (uint64_t serial = head_serial_; serial < head_serial_ + pending_; serial++) chain(serial);
}

void FlowTable::add(const Batch& batch, uint32_t count, double now_ms, double wall_ms) {
  release(now_ms);
  words_.assign(size_t{count} * packet_fields::kWords, 0);
  const uint32_t walked = decode_batch_fields(batch, count, words_.data(), texts_, AddressForm::kBytes);
  malformed_records_ += count - walked;
  const bool grouping = options_.group_window_ms > 0;
  // The packet the batch's previous sample went to: OVN's samples of one packet come together.
  int64_t previous = -1;
  size_t offset = 0;
  for (uint32_t i = 0; i < walked; i++) {
    Record r;
    read_record(batch, offset, r);  // decode_batch_fields read it whole
    offset += r.length;
    if (!r.is_sample()) continue;
    const uint32_t* words = words_.data() + size_t{i} * packet_fields::kWords;
    const bool ovs_cookie = r.cookie_length == kOvsCookieBytes;
    const int64_t datapath_key = ovs_cookie ? int64_t{big_endian_u32(r.cookie) & 0xffffff} : -1;
    const uint64_t kernel_ns = batch.load<uint64_t>(r.at + layout::record::kTimestamp);
    // Kernels before 5.13 give no time: the arrival time stands in.
    const double time_ns = kernel_ns == 0 ? wall_ms * 1e6 : static_cast<double>(kernel_ns);
    const uint32_t hash = words[packet_fields::kHash];
    const int64_t repeat =
        previous >= 0 && (words[packet_fields::kFlags] & packet_fields::kPacketFlagRepeat) != 0 ? previous : -1;
    const int64_t found = grouping ? find(hash, datapath_key, time_ns, r.data, r.data_length, repeat) : -1;
    Pending* packet = nullptr;
    if (found >= 0) {
      packet = &at(static_cast<uint64_t>(found));
      previous = found;
    } else {
      const uint64_t serial = head_serial_ + pending_;
      packet = &push();
      packet->hash = hash;
      packet->datapath_key = datapath_key;
      packet->time_ns = time_ns;
      packet->deadline_ms = now_ms + options_.group_window_ms;
      packet->bytes.assign(r.data, r.data + r.data_length);
      packet->group = batch.load<uint32_t>(r.at + layout::record::kGroup);
      packet->rate = batch.load<uint32_t>(r.at + layout::record::kRate);
      packet->probability = r.flag(layout::record::kFlagProbability);
      packet->samples = 0;
      packet->cookies.clear();
      std::copy(words, words + packet_fields::kWords, packet->words);
      packet->src_bytes = copy_address(words[packet_fields::kSrcText], r.data, r.data_length, packet->addresses);
      packet->dst_bytes =
          copy_address(words[packet_fields::kDstText], r.data, r.data_length, packet->addresses + packet->src_bytes);
      if (grouping) {
        if (pending_ > buckets_.size())
          grow_buckets();
        else
          chain(serial);
      }
      previous = static_cast<int64_t>(serial);
    }
    packet->samples++;
    append_u32(packet->cookies, r.cookie_length);
    packet->cookies.append(reinterpret_cast<const char*>(r.cookie), r.cookie_length);
  }
  if (!grouping) release(kForever);
}

void FlowTable::release(double now_ms) {
  while (pending_ > 0) {
    Pending& packet = ring_[ring_head_];
    if (packet.deadline_ms > now_ms) break;
    // The oldest waiting packet is the oldest of its bucket: its chain's head.
    if (options_.group_window_ms > 0) buckets_[packet.hash & (buckets_.size() - 1)] = packet.next_in_bucket;
    complete(packet);
    ring_head_ = (ring_head_ + 1) & (ring_.size() - 1);
    pending_--;
    head_serial_++;
  }
}

void FlowTable::complete(const Pending& packet) {
  namespace word = packet_fields;
  const double packets = packets_sampled_by(packet.rate, packet.probability);
  // The fixed part in one buffer, then the cookies: one copy each into the reused key.
  const uint32_t address_bytes = uint32_t{packet.src_bytes} + packet.dst_bytes;
  uint32_t fixed[7 + sizeof packet.addresses / sizeof(uint32_t)] = {
      packet.group,
      packet.words[word::kKinds] & 0xffff,
      packet.words[word::kProtocol],
      packet.words[word::kDstPort],
      packet.words[word::kIcmp],
      options_.by_source_port ? packet.words[word::kSrcPort] : 0,
      uint32_t{packet.src_bytes} << 8 | packet.dst_bytes,  // where the source ends and the destination does
  };
  std::memcpy(fixed + 7, packet.addresses, address_bytes);
  std::string& key = key_;
  key.assign(reinterpret_cast<const char*>(fixed), 7 * sizeof(uint32_t) + address_bytes);
  key.append(packet.cookies);

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
    append_address_text(flow.texts, packet.addresses, packet.src_bytes);
    const size_t src_length = flow.texts.size();
    append_address_text(flow.texts, packet.addresses + packet.src_bytes, packet.dst_bytes);
    flow.words[word::kSrcText] = static_cast<uint32_t>(src_length);
    flow.words[word::kDstText] = static_cast<uint32_t>(src_length << 8 | (flow.texts.size() - src_length));
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
  out[slot::kMalformedRecords] = malformed_records_;
  out[slot::kPending] = static_cast<double>(pending_);
  out[slot::kFlows] = static_cast<double>(flows_.size());
  overflow_sampled_packets_ = overflow_samples_ = overflow_packets_ = 0;
}

}  // namespace ovnpsample
