// The grouping rule's native definition: a delivered batch's samples grouped into packets exactly
// as src/events/packet-grouper.ts groups them (same bytes, by their FNV-1a hash first; same
// datapath key of the cookie; within the window of the first sample's kernel time), each packet
// released once its window passed on the caller's monotonic clock, in arrival order. What a
// released packet keeps is what its consumers read without the batch: its first sample's group,
// rate and time, its samples' cookies and its decoded words. watch --aggregate's FlowTable sums the
// released packets into flows.
// Pure C++17 (no N-API).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "packet/packet_fields.h"
#include "wire/batch_record.h"
#include "wire/psample_parser.h"

namespace ovnpsample {

// One sample as the grouper reads it, wherever it lies: a batch's record, or a message in the
// reader thread's receive buffer (fed mode, aggregate/shared_flow_table.h).
struct SampleToGroup {
  const uint8_t* data = nullptr;
  uint32_t data_length = 0;
  const uint8_t* cookie = nullptr;
  uint32_t cookie_length = 0;
  uint32_t group = 0;
  uint32_t rate = 0;
  bool probability = false;
  uint16_t proto = 0;
  uint64_t kernel_ns = 0;  // 0: the kernel gave no time (before 5.13)
};

// A parsed psample sample (MessageKind::kSample), its ranges in `source` (its datagram).
SampleToGroup sample_to_group(const Message& m, const uint8_t* source);

// A packet: its samples grouped. Slots are reused: their strings keep their room.
struct GroupedPacket {
  uint32_t hash = 0;
  // The cookie's datapath key (an OVN cookie's), or -1.
  int64_t datapath_key = -1;
  // The first sample's kernel time (the arrival time where the kernel gives none), ns.
  double time_ns = 0;
  double deadline_ms = 0;
  std::vector<uint8_t> bytes;
  uint32_t group = 0;
  uint32_t rate = 0;
  bool probability = false;
  uint32_t samples = 0;
  // Each sample's cookie in order: its length (u32, host order), then its bytes (none: length 0).
  std::string cookies;
  // The first sample's decoded fields; its srcText and dstText say where the addresses lie in
  // `bytes` (AddressForm::kBytes): their text is made only where a new flow or route needs it
  // (append_address_texts).
  uint32_t words[packet_fields::kWords] = {};
  // When the grouper keeps them: the first sample's batch record, whole (its offsets count from
  // its start, so read_record reads it at 0), its batch's byte order, and when its batch arrived
  // (epoch ms: the time of a sample without the kernel's).
  std::vector<uint8_t> record;
  bool record_swapped = false;
  double arrival_ms = 0;

 private:
  friend class PacketGrouper;
  // The packet that waits after it with a hash in the same bucket (a serial), or -1.
  int64_t next_in_bucket = -1;
};

// Appends to `key` what tells one grouped packet's way from another's, for watch's routes and
// --aggregate's flows alike: the caller's own word, then the group, the link and network kinds,
// protocol, destination port, the source port when asked, the addresses' sizes and bytes, and the
// cookies. Keying on the bytes parts packets as keying on the addresses' text would: the text is
// one-to-one with the bytes (RFC 5952 is canonical), and the kinds tell IPv4 from IPv6.
void append_packet_key(std::string& key, const GroupedPacket& packet, uint32_t own_word, bool by_source_port);

// Appends the packet's source then destination address text to `texts` (empty for none) and sets
// words' srcText to the source's length and dstText to its start << 8 | its length, as a flow or
// route carries them to JavaScript.
void append_address_texts(const GroupedPacket& packet, uint32_t* words, std::string& texts);

class PacketGrouper {
 public:
  static constexpr double kForever = std::numeric_limits<double>::infinity();

  // Samples of one packet within `window_ms` are one packet; 0: every sample is a packet.
  // `keep_first_record`: a packet keeps its first sample's record (a line is written from it).
  explicit PacketGrouper(double window_ms, bool keep_first_record = false)
      : window_ms_(window_ms), keep_first_record_(keep_first_record) {}

  // Groups the `count` records of a batch that arrived at `now_ms` (the monotonic clock deadlines
  // are kept on; `wall_ms`: the epoch time, for samples without a kernel time). Group events are
  // skipped, as the per-packet path skips them. Release what waits first (release(now_ms, …)):
  // a packet whose window passed takes no more samples. Without a window every packet is ready at
  // once.
  void add(const Batch& batch, uint32_t count, double now_ms, double wall_ms);

  // One sample that is not in a batch (a packet keeps no record of it), as add() groups a batch's:
  // the samples between two start_run() calls are one run, as a batch's are (a sample with the
  // previous one's bytes joins its packet without a search).
  void start_run() { previous_ = -1; }
  void add(const SampleToGroup& sample, double now_ms, double wall_ms);

  // Calls released(const GroupedPacket&) for each packet whose deadline is not after `now_ms`
  // (kForever: every packet), oldest first. The reference is valid during the call only.
  template <typename Released>
  void release(double now_ms, Released&& released) {
    while (pending_ > 0) {
      GroupedPacket& packet = ring_[ring_head_];
      if (packet.deadline_ms > now_ms) break;
      // The oldest waiting packet is the oldest of its bucket: its chain's head.
      if (window_ms_ > 0) buckets_[packet.hash & (buckets_.size() - 1)] = packet.next_in_bucket;
      ring_head_ = (ring_head_ + 1) & (ring_.size() - 1);
      pending_--;
      head_serial_++;
      released(static_cast<const GroupedPacket&>(packet));
    }
  }

  size_t pending() const { return pending_; }
  // Since the grouper was made: records outside their batch, and the records after them, skipped.
  double malformed_records() const { return malformed_records_; }

 private:
  // Slots and buckets at the start; each doubles when full.
  static constexpr size_t kMinSlots = 1024;

  bool near(const GroupedPacket& p, int64_t datapath_key, double time_ns) const;
  // The waiting packet (its serial) a sample with these bytes joins, or -1.
  int64_t find(uint32_t hash, int64_t datapath_key, double time_ns, const uint8_t* data, uint32_t length,
               int64_t same_bytes) const;
  GroupedPacket& at(uint64_t serial) { return ring_[(ring_head_ + (serial - head_serial_)) & (ring_.size() - 1)]; }
  const GroupedPacket& at(uint64_t serial) const {
    return ring_[(ring_head_ + (serial - head_serial_)) & (ring_.size() - 1)];
  }
  // A slot at the end of the queue, for the packet with serial head_serial_ + pending().
  GroupedPacket& push();
  // Groups one sample; `record` (with its batch) is kept as the first sample's when it starts a packet.
  void take(const SampleToGroup& sample, double now_ms, double wall_ms, const Batch* batch, const Record* record);
  // Chains the packet `serial` at the end of its bucket.
  void chain(uint64_t serial);
  void grow_buckets();

  double window_ms_;
  bool keep_first_record_;
  // Packets waiting, in arrival order, in a ring (a power of two): the first is at ring_head_ and
  // has serial head_serial_. Without a deque's or a map's node per packet: under a flood the
  // allocator's work per packet cost more than the grouping. A released slot is reused only by a
  // later add(), so the packet handed to `released` stays whole during its call.
  std::vector<GroupedPacket> ring_;
  size_t ring_head_ = 0;
  size_t pending_ = 0;
  uint64_t head_serial_ = 0;
  // The waiting packets by hash (a power of two of buckets): the serial of each bucket's oldest,
  // the others chained through next_in_bucket in arrival order, so the first released is a head.
  std::vector<int64_t> buckets_;

  double malformed_records_ = 0;

  // The packet the run's previous sample went to (-1: none), and that sample's PROTO: OVN's samples
  // of one packet come together.
  int64_t previous_ = -1;
  uint16_t previous_proto_ = 0;
  // store_fields' text output, unused with AddressForm::kBytes.
  std::string no_texts_;
};

}  // namespace ovnpsample
