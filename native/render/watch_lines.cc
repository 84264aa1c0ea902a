#include "render/watch_lines.h"

#include <algorithm>

#include "aggregate/flow_table.h"
#include "render/event_json.h"
#include "render/line_out.h"
#include "wire/batch_layout.h"

namespace ovnpsample {

namespace {

// The first sample's record as the grouper kept it: whole (read_record read it in its batch).
Batch record_of(const GroupedPacket& packet) {
  return Batch{packet.record.data(), packet.record.size(), packet.record_swapped};
}

}  // namespace

void WatchLines::start_release() {
  released_count_ = 0;
  next_ = 0;
  fresh_.clear();
  if (forget_) {
    forget_ = false;
    routes_.clear();
    index_.clear();
    touched_.clear();
    first_id_ = next_id_;
  }
}

const std::vector<uint32_t>& WatchLines::add(const Batch& batch, uint32_t count, double now_ms, double wall_ms) {
  start_release();
  grouper_.release(now_ms, [this](const GroupedPacket& packet) { take(packet); });
  grouper_.add(batch, count, now_ms, wall_ms);
  if (options_.group_window_ms <= 0)
    grouper_.release(PacketGrouper::kForever, [this](const GroupedPacket& packet) { take(packet); });
  return fresh_;
}

const std::vector<uint32_t>& WatchLines::release(double now_ms, bool final) {
  start_release();
  grouper_.release(final ? PacketGrouper::kForever : now_ms, [this](const GroupedPacket& packet) { take(packet); });
  return fresh_;
}

void WatchLines::take(const GroupedPacket& packet) {
  namespace word = packet_fields;
  if (released_count_ == released_.size()) released_.emplace_back();
  Released& slot = released_[released_count_++];
  slot.packet = packet;
  slot.judged = false;
  slot.shown = false;
  const uint32_t iifindex = record_of(packet).load<uint32_t>(layout::record::kIfindexes) & 0xffff;
  std::string& key = key_;
  key.clear();
  append_packet_key(key, packet, iifindex, options_.by_source_port);
  auto found = index_.find(key);
  if (found == index_.end()) {
    found = index_.emplace(key, static_cast<uint32_t>(routes_.size())).first;
    WatchRoute& route = routes_.emplace_back();
    route.id = next_id_++;
    route.group = packet.group;
    route.iifindex = iifindex;
    route.cookies = packet.cookies;
    std::copy(packet.words, packet.words + word::kWords, route.words);
    append_address_texts(packet, route.words, route.texts);
    fresh_.push_back(found->second);
  }
  slot.route = found->second;
}

bool WatchLines::answer(uint32_t id, WatchRouteAnswer answer) {
  if (id < first_id_ || id - first_id_ >= routes_.size()) return false;
  WatchRoute& route = routes_[id - first_id_];
  route.answer = std::move(answer);
  route.answered = true;
  return true;
}

bool WatchLines::render(uint8_t* out, size_t out_length, double* n) {
  namespace slot = watch_lines;
  auto at = static_cast<size_t>(n[slot::kRenderAt]);
  double limit = n[slot::kRenderLimit];
  n[slot::kRenderNeeded] = 0;
  n[slot::kRenderClock] = -1;
  for (; next_ < released_count_; next_++) {
    Released& released = released_[next_];
    WatchRoute& route = routes_[released.route];
    if (!route.answered) return false;
    const GroupedPacket& packet = released.packet;
    if (!released.judged) {
      // As watch counts a packet: every one in the metrics; shown or filtered until --count's end.
      released.judged = true;
      if (route.sampled_packets == 0) touched_.push_back(released.route);
      route.sampled_packets++;
      route.packets += packets_sampled_by(packet.rate, packet.probability);
      packets_++;
      if (limit <= 0) {
        released.shown = false;
      } else if (!route.answer.accepted) {
        filtered_++;
      } else {
        released.shown = true;
        shown_++;
        limit--;
      }
    }
    if (!released.shown) continue;
    const Batch b = record_of(packet);
    Record r;
    read_record(b, 0, r);  // whole in its batch when the grouper copied it
    // Kernels before 5.13 give no time: the arrival time stands in.
    uint64_t timestamp_ns = b.load<uint64_t>(layout::record::kTimestamp);
    if (timestamp_ns == 0) timestamp_ns = static_cast<uint64_t>(packet.arrival_ms) * 1'000'000;
    const DecodedPacket decoded = load_fields(packet.words, r.data, r.data_length);
    const WatchRouteAnswer& answer = route.answer;
    LineOut written(out + at, out + out_length);
    if (options_.human) {
      // The time zone is JavaScript's: it tells the local time of each second a line shows.
      const uint64_t second = timestamp_ns / 1'000'000'000;
      if (!columns_.has_clock(second)) {
        n[slot::kRenderClock] = static_cast<double>(second);
        break;
      }
      const HumanTexts texts = answer.human.view();
      columns_.append_line(written, timestamp_ns, texts, &decoded);
      if (written.overflowed()) {
        line_.clear();
        columns_.append_line(line_, timestamp_ns, texts, &decoded);
      }
    } else {
      EventJsonLine line;
      event_json_line_from_record(b, r, line);
      line.timestamp_ns = timestamp_ns;
      line.head = answer.head;
      line.steps = answer.steps;
      line.src = answer.src.empty() ? nullptr : &answer.src;
      line.dst = answer.dst.empty() ? nullptr : &answer.dst;
      line.interface = answer.interface.empty() ? nullptr : &answer.interface;
      line.datapath = answer.datapath.empty() ? nullptr : &answer.datapath;
      line.samples = packet.samples;
      line.packet = &decoded;
      append_event_json(written, line, packet_json_);
      if (written.overflowed()) {
        line_.clear();
        append_event_json(line_, line, packet_json_);
      }
    }
    if (written.overflowed()) {
      n[slot::kRenderNeeded] = static_cast<double>(line_.size());
      break;
    }
    at += written.size();
  }
  n[slot::kRenderAt] = static_cast<double>(at);
  n[slot::kRenderLimit] = limit;
  n[slot::kRenderLeft] = static_cast<double>(released_count_ - next_);
  n[slot::kRenderPackets] = packets_;
  n[slot::kRenderShown] = shown_;
  n[slot::kRenderFiltered] = filtered_;
  n[slot::kRenderMalformed] = grouper_.malformed_records();
  n[slot::kRenderPending] = static_cast<double>(grouper_.pending());
  return true;
}

}  // namespace ovnpsample
