// The grouping rule's native definition (aggregate/packet_grouper.h): what a released packet
// keeps, the order and moment of release, and many packets waiting at once.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "aggregate/packet_grouper.h"
#include "check.h"
#include "grouping_batches.h"

namespace ovnpsample::testing {
namespace {

struct Released {
  uint32_t group;
  uint32_t rate;
  double time_ns;
  uint32_t samples;
  std::vector<uint32_t> points;  // each sample's cookie's last byte, in order
  std::string src;
  std::string dst;
  uint16_t src_port;
};

std::vector<Released> release(PacketGrouper& grouper, double now_ms) {
  std::vector<Released> out;
  grouper.release(now_ms, [&](const GroupedPacket& p) {
    Released r{p.group, p.rate, p.time_ns, p.samples, {}, {}, {}, 0};
    for (size_t at = 0; at + 4 <= p.cookies.size();) {
      uint32_t length = 0;
      std::memcpy(&length, p.cookies.data() + at, 4);
      at += 4;
      r.points.push_back(length == 0 ? 0 : static_cast<uint8_t>(p.cookies[at + length - 1]));
      at += length;
    }
    uint32_t words[packet_fields::kWords] = {};
    std::string texts;
    append_address_texts(p, words, texts);
    const uint32_t src_length = words[packet_fields::kSrcText] & 0xff;
    const uint32_t dst_word = words[packet_fields::kDstText];
    r.src = texts.substr(0, src_length);
    r.dst = texts.substr(dst_word >> 8, dst_word & 0xff);
    r.src_port = static_cast<uint16_t>(p.words[packet_fields::kSrcPort]);
    out.push_back(std::move(r));
  });
  return out;
}

void add(PacketGrouper& grouper, const std::vector<SampleSpec>& specs, double now_ms) {
  const BuiltBatch b = build(specs);
  grouper.add(b.view(), b.batch.count, now_ms, 0);
}

TEST_CASE("packet grouper: a released packet keeps its first sample's group, rate, time and texts, every cookie") {
  PacketGrouper grouper(50);
  add(grouper, {{frame(2, 1000), kT0, 1, 1, 10, false, 7}}, 0);
  add(grouper, {{frame(2, 1000), kT0 + 2 * kMs, 1, 2, 20, false, 8}, {frame(2, 1000), kT0 + 3 * kMs, 1, 3}}, 5);
  const std::vector<Released> packets = release(grouper, PacketGrouper::kForever);
  if (!CHECK_EQ(packets.size(), 1u)) return;
  CHECK_EQ(packets[0].group, 7u);
  CHECK_EQ(packets[0].rate, 10u);
  CHECK_EQ(packets[0].time_ns, static_cast<double>(kT0));
  CHECK_EQ(packets[0].samples, 3u);
  CHECK(packets[0].points == std::vector<uint32_t>({1, 2, 3}));
  CHECK_EQ(packets[0].src, std::string("10.0.0.1"));
  CHECK_EQ(packets[0].dst, std::string("10.0.0.2"));
  CHECK_EQ(packets[0].src_port, uint16_t{1000});
}

TEST_CASE("packet grouper: packets are released oldest first, at their deadline and not before") {
  PacketGrouper grouper(50);
  add(grouper, {{frame(2, 1000), kT0, 1}}, 0);
  add(grouper, {{frame(3, 1000), kT0 + 10 * kMs, 1}}, 10);
  CHECK(release(grouper, 49.5).empty());
  CHECK_EQ(release(grouper, 50).size(), 1u);
  CHECK_EQ(grouper.pending(), 1u);
  const std::vector<Released> last = release(grouper, 60);
  if (!CHECK_EQ(last.size(), 1u)) return;
  CHECK_EQ(last[0].dst, std::string("10.0.0.3"));
}

TEST_CASE("packet grouper: a packet whose consumer threw is not released again") {
  PacketGrouper grouper(50);
  add(grouper, {{frame(2, 1000), kT0, 1}, {frame(3, 1000), kT0, 1}}, 0);
  bool threw = false;
  try {
    grouper.release(PacketGrouper::kForever, [](const GroupedPacket&) { throw std::runtime_error("consumer"); });
  } catch (const std::runtime_error&) {
    threw = true;
  }
  CHECK(threw);
  const std::vector<Released> rest = release(grouper, PacketGrouper::kForever);
  if (!CHECK_EQ(rest.size(), 1u)) return;
  CHECK_EQ(rest[0].dst, std::string("10.0.0.3"));
}

TEST_CASE("packet grouper: thousands waiting at once (the ring and the buckets grow) each find their own samples") {
  PacketGrouper grouper(50);
  constexpr int kPackets = 3000;
  std::vector<SampleSpec> firsts;
  std::vector<SampleSpec> seconds;
  for (int i = 0; i < kPackets; i++) {
    const auto host = static_cast<uint8_t>(2 + i % 200);
    const auto port = static_cast<uint16_t>(1000 + i / 200);
    firsts.push_back({frame(host, port), kT0, 1, 1});
    seconds.push_back({frame(host, port), kT0 + kMs, 1, 2});
  }
  add(grouper, firsts, 0);
  // Reversed, so no sample follows its packet's previous one (the repeat shortcut cannot help).
  add(grouper, std::vector<SampleSpec>(seconds.rbegin(), seconds.rend()), 1);
  CHECK_EQ(grouper.pending(), static_cast<size_t>(kPackets));
  const std::vector<Released> packets = release(grouper, PacketGrouper::kForever);
  if (!CHECK_EQ(packets.size(), static_cast<size_t>(kPackets))) return;
  int whole = 0;
  for (int i = 0; i < kPackets; i++) {
    const bool ordered = packets[i].points == std::vector<uint32_t>({1, 2});
    const bool own = packets[i].dst == "10.0.0." + std::to_string(2 + i % 200) && packets[i].src_port == 1000 + i / 200;
    whole += ordered && own ? 1 : 0;
  }
  CHECK_EQ(whole, kPackets);
  CHECK_EQ(grouper.pending(), 0u);
}

TEST_CASE("packet grouper: a kept record whose length says more than its batch holds is copied as far as it reaches") {
  PacketGrouper grouper(0, true);
  BuiltBatch b = build({{frame(2, 1000), kT0, 1}});
  // The length field of the batch's only record, made to reach past the batch.
  const auto lying = static_cast<uint32_t>(b.batch.bytes.size() + 100);
  std::memcpy(b.batch.bytes.data() + layout::record::kLength, &lying, sizeof lying);
  grouper.add(b.view(), b.batch.count, 0, 0);
  size_t released = 0;
  grouper.release(PacketGrouper::kForever, [&](const GroupedPacket& p) {
    released++;
    CHECK(p.record.size() <= b.batch.bytes.size());
    const Batch copy{p.record.data(), p.record.size(), p.record_swapped};
    Record r;
    if (!CHECK(read_record(copy, 0, r))) return;
    const std::vector<uint8_t> sent = frame(2, 1000);
    CHECK(r.data_length == sent.size() && std::memcmp(r.data, sent.data(), sent.size()) == 0);
  });
  CHECK_EQ(released, size_t{1});
}

TEST_CASE("packet grouper: without a window every sample is a packet, ready at once") {
  PacketGrouper grouper(0);
  add(grouper, {{frame(2, 1000), kT0, 1, 1}, {frame(2, 1000), kT0, 1, 2}}, 0);
  CHECK_EQ(release(grouper, 0).size(), 2u);
}

}  // namespace
}  // namespace ovnpsample::testing
