#include "aggregate/packet_grouper.h"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace ovnpsample {

namespace {

void append_u32(std::string& to, uint32_t value) { to.append(reinterpret_cast<const char*>(&value), sizeof value); }

// An address text of the batch's string, as the slot's word points to it (start << 8 | length).
std::string_view text_of(const std::string& texts, uint32_t word) {
  const uint32_t start = word >> 8;
  const uint32_t length = word & 0xff;
  if (length == 0 || start > texts.size() || length > texts.size() - start) return {};
  return std::string_view(texts).substr(start, length);
}

// The bytes from a record's start that hold everything it points to: read_record checked that each
// range lies in the batch, but not that the record's own length does (a lying length is clipped).
// A copy of these bytes reads back, at 0, as the record read in its batch.
size_t record_extent(const Batch& b, const Record& r) {
  const uint8_t* start = b.base + r.at;
  size_t end = std::min<size_t>(r.length, b.size - r.at);
  const auto reach = [&](const uint8_t* bytes, size_t length) {
    if (bytes != nullptr) end = std::max(end, static_cast<size_t>(bytes - start) + length);
  };
  reach(r.data, r.data_length);
  reach(r.cookie, r.cookie_length);
  if (r.flag(layout::record::kFlagTunnel)) reach(b.base + r.tunnel, layout::tunnel_block::kBytes);
  reach(r.geneve, r.geneve_length);
  reach(r.erspan, r.erspan_length);
  return end;
}

}  // namespace

void append_packet_key(std::string& key, const GroupedPacket& packet, uint32_t own_word, bool by_source_port) {
  namespace word = packet_fields;
  append_u32(key, own_word);
  append_u32(key, packet.group);
  append_u32(key, packet.words[word::kKinds] & 0xffff);
  append_u32(key, packet.words[word::kProtocol]);
  append_u32(key, packet.words[word::kDstPort]);
  append_u32(key, by_source_port ? packet.words[word::kSrcPort] : 0);
  append_u32(key, packet.words[word::kDstText]);  // the two texts' lengths: where src ends and dst does
  key.append(packet.texts);
  key.append(packet.cookies);
}

bool PacketGrouper::near(const GroupedPacket& p, int64_t datapath_key, double time_ns) const {
  // In doubles, as the TypeScript grouper compares them, so both agree at the window's edge.
  const double gap = time_ns - p.time_ns;
  const double window_ns = window_ms_ * 1e6;
  return p.datapath_key == datapath_key && gap <= window_ns && gap >= -window_ns;
}

int64_t PacketGrouper::find(uint32_t hash, int64_t datapath_key, double time_ns, const uint8_t* data, uint32_t length,
                            int64_t same_bytes) const {
  if (same_bytes >= 0 && static_cast<uint64_t>(same_bytes) >= head_serial_ &&
      near(at(static_cast<uint64_t>(same_bytes)), datapath_key, time_ns))
    return same_bytes;
  if (buckets_.empty()) return -1;
  for (int64_t serial = buckets_[hash & (buckets_.size() - 1)]; serial >= 0;) {
    const GroupedPacket& p = at(static_cast<uint64_t>(serial));
    if (p.hash == hash && p.bytes.size() == length && near(p, datapath_key, time_ns) &&
        (length == 0 || std::memcmp(p.bytes.data(), data, length) == 0))
      return serial;
    serial = p.next_in_bucket;
  }
  return -1;
}

GroupedPacket& PacketGrouper::push() {
  if (pending_ == ring_.size()) {
    std::vector<GroupedPacket> ring(std::max<size_t>(ring_.size() * 2, kMinSlots));
    for (size_t i = 0; i < pending_; i++) ring[i] = std::move(ring_[(ring_head_ + i) & (ring_.size() - 1)]);
    ring_ = std::move(ring);
    ring_head_ = 0;
  }
  GroupedPacket& slot = ring_[(ring_head_ + pending_) & (ring_.size() - 1)];
  pending_++;
  return slot;
}

void PacketGrouper::chain(uint64_t serial) {
  GroupedPacket& packet = at(serial);
  packet.next_in_bucket = -1;
  int64_t* link = &buckets_[packet.hash & (buckets_.size() - 1)];
  while (*link >= 0) link = &at(static_cast<uint64_t>(*link)).next_in_bucket;
  *link = static_cast<int64_t>(serial);
}

void PacketGrouper::grow_buckets() {
  buckets_.assign(std::max<size_t>(buckets_.size() * 2, kMinSlots), -1);
  for (uint64_t serial = head_serial_; serial < head_serial_ + pending_; serial++) chain(serial);
}

void PacketGrouper::add(const Batch& batch, uint32_t count, double now_ms, double wall_ms) {
  words_.assign(size_t{count} * packet_fields::kWords, 0);
  texts_.clear();
  const uint32_t walked = decode_batch_fields(batch, count, words_.data(), texts_);
  malformed_records_ += count - walked;
  const bool grouping = window_ms_ > 0;
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
    GroupedPacket* packet = nullptr;
    if (found >= 0) {
      packet = &at(static_cast<uint64_t>(found));
      previous = found;
    } else {
      const uint64_t serial = head_serial_ + pending_;
      packet = &push();
      packet->hash = hash;
      packet->datapath_key = datapath_key;
      packet->time_ns = time_ns;
      packet->deadline_ms = now_ms + window_ms_;
      packet->bytes.assign(r.data, r.data + r.data_length);
      packet->group = batch.load<uint32_t>(r.at + layout::record::kGroup);
      packet->rate = batch.load<uint32_t>(r.at + layout::record::kRate);
      packet->probability = r.flag(layout::record::kFlagProbability);
      packet->samples = 0;
      packet->cookies.clear();
      std::copy(words, words + packet_fields::kWords, packet->words);
      const std::string_view src = text_of(texts_, words[packet_fields::kSrcText]);
      const std::string_view dst = text_of(texts_, words[packet_fields::kDstText]);
      packet->texts.assign(src).append(dst);
      packet->words[packet_fields::kSrcText] = static_cast<uint32_t>(src.size());
      packet->words[packet_fields::kDstText] = static_cast<uint32_t>(src.size() << 8 | dst.size());
      if (keep_first_record_) {
        packet->record.assign(batch.base + r.at, batch.base + r.at + record_extent(batch, r));
        packet->record_swapped = batch.swap;
        packet->arrival_ms = wall_ms;
      }
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
}

}  // namespace ovnpsample
