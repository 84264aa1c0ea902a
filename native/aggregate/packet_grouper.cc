#include "aggregate/packet_grouper.h"

#include <algorithm>
#include <cstring>

#include "packet/address_text.h"

namespace ovnpsample {

namespace {

void append_u32(std::string& to, uint32_t value) { to.append(reinterpret_cast<const char*>(&value), sizeof value); }

// The key's words before the addresses' bytes.
constexpr size_t kKeyWords = 7;

struct AddressBytes {
  const uint8_t* bytes = nullptr;
  uint32_t length = 0;  // 0, 4 or 16
};

// The address a packet's srcText or dstText word points to in its bytes (offset << 8 | length).
AddressBytes address_bytes(const GroupedPacket& packet, uint32_t word) {
  const uint32_t offset = word >> 8;
  const uint32_t length = word & 0xff;
  if ((length != 4 && length != 16) || offset > packet.bytes.size() || length > packet.bytes.size() - offset) return {};
  return {packet.bytes.data() + offset, length};
}

// Returns the characters appended: the address as the decoder writes it.
size_t append_address_text(std::string& to, AddressBytes address) {
  if (address.length == 0) return 0;
  char text[kIpv6TextMax];
  const size_t length = address.length == 16 ? format_ipv6(text, address.bytes) : format_ipv4(text, address.bytes);
  to.append(text, length);
  return length;
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
  const AddressBytes src = address_bytes(packet, packet.words[word::kSrcText]);
  const AddressBytes dst = address_bytes(packet, packet.words[word::kDstText]);
  // The fixed part and the addresses in one buffer: one append, then the cookies'.
  uint32_t fixed[kKeyWords + 2 * 16 / sizeof(uint32_t)] = {
      own_word,
      packet.group,
      packet.words[word::kKinds] & 0xffff,
      packet.words[word::kProtocol],
      packet.words[word::kDstPort],
      by_source_port ? packet.words[word::kSrcPort] : 0,
      src.length << 8 | dst.length,  // where the source ends and the destination does
  };
  auto* addresses = reinterpret_cast<uint8_t*>(fixed + kKeyWords);
  if (src.length != 0) std::memcpy(addresses, src.bytes, src.length);
  if (dst.length != 0) std::memcpy(addresses + src.length, dst.bytes, dst.length);
  key.append(reinterpret_cast<const char*>(fixed), kKeyWords * sizeof(uint32_t) + src.length + dst.length);
  key.append(packet.cookies);
}

void append_address_texts(const GroupedPacket& packet, uint32_t* words, std::string& texts) {
  namespace word = packet_fields;
  const AddressBytes src = address_bytes(packet, packet.words[word::kSrcText]);
  const AddressBytes dst = address_bytes(packet, packet.words[word::kDstText]);
  const size_t start = texts.size();
  const size_t src_length = append_address_text(texts, src);
  const size_t dst_length = append_address_text(texts, dst);
  words[word::kSrcText] = static_cast<uint32_t>(start << 8 | src_length);
  words[word::kDstText] = static_cast<uint32_t>((start + src_length) << 8 | dst_length);
}

SampleToGroup sample_to_group(const Message& m, const uint8_t* source) {
  SampleToGroup sample;
  sample.data = source + m.data.offset;
  sample.data_length = m.data.length;
  sample.cookie = source + m.user_cookie.offset;
  sample.cookie_length = m.user_cookie.length;
  sample.group = m.group;
  sample.rate = m.rate;
  sample.probability = m.probability;
  sample.proto = m.proto;
  sample.kernel_ns = m.timestamp;
  return sample;
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
  start_run();
  size_t offset = 0;
  for (uint32_t i = 0; i < count; i++) {
    Record r;
    if (!read_record(batch, offset, r)) {
      malformed_records_ += count - i;
      return;
    }
    offset += r.length;
    if (!r.is_sample()) continue;
    SampleToGroup sample;
    sample.data = r.data;
    sample.data_length = r.data_length;
    sample.cookie = r.cookie;
    sample.cookie_length = r.cookie_length;
    sample.group = batch.load<uint32_t>(r.at + layout::record::kGroup);
    sample.rate = batch.load<uint32_t>(r.at + layout::record::kRate);
    sample.probability = r.flag(layout::record::kFlagProbability);
    sample.proto = static_cast<uint16_t>(batch.load<uint32_t>(r.at + layout::record::kOutTcProto) >> 16);
    sample.kernel_ns = batch.load<uint64_t>(r.at + layout::record::kTimestamp);
    take(sample, now_ms, wall_ms, &batch, &r);
  }
}

void PacketGrouper::add(const SampleToGroup& sample, double now_ms, double wall_ms) {
  take(sample, now_ms, wall_ms, nullptr, nullptr);
}

void PacketGrouper::take(const SampleToGroup& s, double now_ms, double wall_ms, const Batch* batch,
                         const Record* record) {
  const bool grouping = window_ms_ > 0;
  const int64_t datapath_key = s.cookie_length == kOvsCookieBytes ? int64_t{big_endian_u32(s.cookie) & 0xffffff} : -1;
  // Kernels before 5.13 give no time: the arrival time stands in.
  const double time_ns = s.kernel_ns == 0 ? wall_ms * 1e6 : static_cast<double>(s.kernel_ns);
  // A sample with the run's previous sample's bytes and PROTO (OVN samples a packet at several
  // stages) may join that one's packet without hashing or searching.
  int64_t repeat = -1;
  if (grouping && previous_ >= 0 && static_cast<uint64_t>(previous_) >= head_serial_ && previous_proto_ == s.proto) {
    const GroupedPacket& p = at(static_cast<uint64_t>(previous_));
    if (p.bytes.size() == s.data_length &&
        (s.data_length == 0 || std::memcmp(p.bytes.data(), s.data, s.data_length) == 0))
      repeat = previous_;
  }
  previous_proto_ = s.proto;
  const uint32_t hash = repeat >= 0 ? at(static_cast<uint64_t>(repeat)).hash : packet_hash(s.data, s.data_length);
  const int64_t found = grouping ? find(hash, datapath_key, time_ns, s.data, s.data_length, repeat) : -1;
  GroupedPacket* packet = nullptr;
  if (found >= 0) {
    packet = &at(static_cast<uint64_t>(found));
    previous_ = found;
  } else {
    const uint64_t serial = head_serial_ + pending_;
    packet = &push();
    packet->hash = hash;
    packet->datapath_key = datapath_key;
    packet->time_ns = time_ns;
    packet->deadline_ms = now_ms + window_ms_;
    packet->bytes.assign(s.data, s.data + s.data_length);
    packet->group = s.group;
    packet->rate = s.rate;
    packet->probability = s.probability;
    packet->samples = 0;
    packet->cookies.clear();
    // Decoded once per packet, not per sample: the packet's later samples carry the same bytes.
    store_fields(decode_packet(s.data, s.data_length, s.proto), s.proto, hash, packet->words, no_texts_,
                 AddressForm::kBytes);
    if (keep_first_record_ && record != nullptr) {
      packet->record.assign(batch->base + record->at, batch->base + record->at + record_extent(*batch, *record));
      packet->record_swapped = batch->swap;
      packet->arrival_ms = wall_ms;
    }
    if (grouping) {
      if (pending_ > buckets_.size())
        grow_buckets();
      else
        chain(serial);
    }
    previous_ = static_cast<int64_t>(serial);
  }
  packet->samples++;
  append_u32(packet->cookies, s.cookie_length);
  packet->cookies.append(reinterpret_cast<const char*>(s.cookie), s.cookie_length);
}

}  // namespace ovnpsample
