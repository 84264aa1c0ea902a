// The native flows of watch --aggregate (aggregate/flow_table.h): grouping as
// src/events/packet-grouper.ts groups, flows, the cap and odd records.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "aggregate/flow_table.h"
#include "check.h"
#include "grouping_batches.h"

namespace ovnpsample::testing {
namespace {

struct Drained {
  uint32_t id;
  uint32_t cookies;  // samples' cookies in the key
  double sampled_packets;
  double samples;
  double packets;
  double first_ns;
  double last_ns;
};

std::vector<Drained> drain(FlowTable& table, double now_ms, bool final, bool end_interval = false) {
  std::vector<Drained> out;
  table.drain(now_ms, final, end_interval, [&](const NativeFlow& f) {
    uint32_t cookies = 0;
    for (size_t at = 0; at + 4 <= f.cookies.size(); cookies++) {
      uint32_t length = 0;
      std::memcpy(&length, f.cookies.data() + at, 4);
      at += 4 + length;
    }
    out.push_back({f.id, cookies, f.sampled_packets, f.samples, f.packets, f.first_ns, f.last_ns});
  });
  return out;
}

void add(FlowTable& table, const std::vector<SampleSpec>& specs, double now_ms) {
  const BuiltBatch b = build(specs);
  table.add(b.view(), b.batch.count, now_ms, 0);
}

FlowTableOptions options(size_t max_flows = 100) {
  FlowTableOptions o;
  o.group_window_ms = 50;
  o.max_flows = max_flows;
  return o;
}

TEST_CASE("flow table: a packet's samples in two batches are one packet, handed on once its window passed") {
  FlowTable table(options());
  add(table, {{frame(2, 1000), kT0, 1, 1}}, 0);
  add(table, {{frame(2, 1000), kT0 + 1 * kMs, 1, 2}}, 10);
  CHECK_EQ(table.pending(), 1u);
  CHECK(drain(table, 49, false).empty());  // its window is still open
  const std::vector<Drained> flows = drain(table, 50, false);
  if (!CHECK_EQ(flows.size(), 1u)) return;
  CHECK_EQ(flows[0].sampled_packets, 1.0);
  CHECK_EQ(flows[0].samples, 2.0);
  CHECK_EQ(flows[0].cookies, 2u);
  CHECK_EQ(table.pending(), 0u);
}

TEST_CASE("flow table: the window's edge on kernel time: a sample at exactly the window joins, one later does not") {
  FlowTable table(options());
  add(table,
      {{frame(2, 1000), kT0, 1, 1}, {frame(2, 1000), kT0 + 50 * kMs, 1, 2}, {frame(2, 1000), kT0 + 50 * kMs + 1, 1, 3}},
      0);
  const std::vector<Drained> flows = drain(table, 100, false);
  if (!CHECK_EQ(flows.size(), 2u)) return;
  CHECK_EQ(flows[0].cookies, 2u);  // points 1 and 2
  CHECK_EQ(flows[1].cookies, 1u);  // point 3: a packet of its own
}

TEST_CASE("flow table: the same bytes on another datapath are another packet") {
  FlowTable table(options());
  add(table, {{frame(2, 1000), kT0, 1, 1}, {frame(2, 1000), kT0, 2, 1}}, 0);
  const std::vector<Drained> flows = drain(table, 0, true);
  if (!CHECK_EQ(flows.size(), 2u)) return;
  CHECK_EQ(flows[0].samples, 1.0);
  CHECK_EQ(flows[1].samples, 1.0);
}

TEST_CASE("flow table: packets without a cookie group by their bytes and make a flow of their own") {
  FlowTable table(options());
  add(table,
      {{frame(2, 1000), kT0, -1},
       {frame(2, 1000), kT0, -1},
       {frame(2, 1001), kT0, -1},
       {frame(2, 1001), kT0, -1},
       {frame(2, 1002), kT0, -1}},
      0);
  const std::vector<Drained> flows = drain(table, 0, true);
  // Two packets of two samples (the source port differs, and is not keyed): one flow. The packet
  // sampled once took another way (one step, not two).
  if (!CHECK_EQ(flows.size(), 2u)) return;
  CHECK_EQ(flows[0].sampled_packets, 2.0);
  CHECK_EQ(flows[0].samples, 4.0);
  CHECK_EQ(flows[0].cookies, 2u);
  CHECK_EQ(flows[1].cookies, 1u);
}

TEST_CASE("flow table: the source port is keyed when asked") {
  FlowTableOptions o = options();
  o.by_source_port = true;
  FlowTable table(o);
  add(table, {{frame(2, 1000), kT0, 1}, {frame(2, 1001), kT0, 1}}, 0);
  CHECK_EQ(drain(table, 0, true).size(), 2u);
}

TEST_CASE("flow table: group events are skipped, as the per-packet path skips them") {
  FlowTable table(options());
  SampleSpec group_event;
  group_event.group_event = true;
  add(table, {group_event, {frame(2, 1000), kT0, 1}, group_event}, 0);
  const std::vector<Drained> flows = drain(table, 0, true);
  if (!CHECK_EQ(flows.size(), 1u)) return;
  CHECK_EQ(flows[0].samples, 1.0);
  double stats[flow_table::kStatSlots];
  table.take_stats(stats);
  CHECK_EQ(stats[flow_table::kMalformedRecords], 0.0);
}

TEST_CASE(
    "flow table: past the cap a packet is counted as overflow with what it stands for, and flows held keep counting") {
  FlowTable table(options(2));
  add(table,
      {{frame(2, 1000), kT0, 1, 1, 10},
       {frame(3, 1000), kT0 + 10 * kMs, 1, 1, 10},
       {frame(4, 1000), kT0 + 20 * kMs, 1, 1, 10},
       {frame(2, 1001), kT0 + 30 * kMs, 1, 1, 10}},
      0);
  const std::vector<Drained> flows = drain(table, 0, true);
  if (!CHECK_EQ(flows.size(), 2u)) return;
  CHECK_EQ(flows[0].sampled_packets, 2.0);
  CHECK_EQ(flows[0].packets, 20.0);
  CHECK_EQ(flows[0].first_ns, static_cast<double>(kT0));
  CHECK_EQ(flows[0].last_ns, static_cast<double>(kT0 + 30 * kMs));
  double stats[flow_table::kStatSlots];
  table.take_stats(stats);
  CHECK_EQ(stats[flow_table::kOverflowSampledPackets], 1.0);
  CHECK_EQ(stats[flow_table::kOverflowPackets], 10.0);
  table.take_stats(stats);
  CHECK_EQ(stats[flow_table::kOverflowSampledPackets], 0.0);  // since the last take
}

TEST_CASE("flow table: an interval's end forgets the flows; ids are never used again") {
  FlowTable table(options());
  add(table, {{frame(2, 1000), kT0, 1}}, 0);
  const std::vector<Drained> first = drain(table, 0, true, true);
  add(table, {{frame(2, 1000), kT0 + 100 * kMs, 1}}, 100);
  const std::vector<Drained> second = drain(table, 100, true, true);
  if (!CHECK_EQ(first.size(), 1u) || !CHECK_EQ(second.size(), 1u)) return;
  CHECK(first[0].id != second[0].id);
}

TEST_CASE(
    "flow table: what a sample stands for: 1 in rate, 1/probability with the flag, itself when the rate says nothing") {
  CHECK_EQ(packets_sampled_by(0xffffffff, true), 1.0);
  CHECK_EQ(packets_sampled_by(100, false), 100.0);
  CHECK_EQ(packets_sampled_by(0, true), 1.0);
  CHECK_EQ(packets_sampled_by(0, false), 1.0);
  CHECK(packets_sampled_by(0x7fffffff, true) > 2.0 && packets_sampled_by(0x7fffffff, true) < 2.000001);
}

TEST_CASE("flow table: a record that reaches outside its batch is counted with those after it, the ones before kept") {
  FlowTable table(options());
  const BuiltBatch b = build({{frame(2, 1000), kT0, 1}, {frame(3, 1000), kT0, 1}});
  // The batch cut in the second record.
  const Batch cut{b.batch.bytes.data(), b.batch.bytes.size() - 16, false};
  table.add(cut, b.batch.count, 0, 0);
  CHECK_EQ(drain(table, 0, true).size(), 1u);
  double stats[flow_table::kStatSlots];
  table.take_stats(stats);
  CHECK_EQ(stats[flow_table::kMalformedRecords], 1.0);
}

TEST_CASE("flow table: without a window every sample is a packet") {
  FlowTableOptions o = options();
  o.group_window_ms = 0;
  FlowTable table(o);
  add(table, {{frame(2, 1000), kT0, 1, 1}, {frame(2, 1000), kT0, 1, 2}}, 0);
  CHECK_EQ(table.pending(), 0u);
  const std::vector<Drained> flows = drain(table, 0, false);
  CHECK_EQ(flows.size(), 2u);
}

// The fed path's entry (start_run / add(SampleToGroup)): what the reader thread gives the table
// straight from its receive buffers must make the flows a batch of the same samples makes, keys
// (words, address texts, cookies) included.
TEST_CASE("flow table: samples added one by one in runs make the flows, keys and counts the same batches make") {
  const std::vector<std::vector<SampleSpec>> runs = {
      {{frame(2, 1000), kT0, 1, 1, 10}, {frame(2, 1000), kT0 + 1 * kMs, 1, 2, 10}, {frame(3, 1000), kT0, -1}},
      {{frame(2, 1000), kT0 + 2 * kMs, 1, 3}, {frame(2, 1001), kT0 + 2 * kMs, 2, 1, 0xffffffff, true}},
      {{frame(4, 1000), kT0 + 200 * kMs, 1, 1}, {frame(4, 1000), kT0 + 200 * kMs, 1, 4}},
  };
  struct Flow {
    uint32_t id;
    std::string cookies;
    std::vector<uint32_t> words;
    std::string texts;
    double sampled_packets, samples, packets, first_ns, last_ns;
    bool operator==(const Flow& o) const {
      return id == o.id && cookies == o.cookies && words == o.words && texts == o.texts &&
             sampled_packets == o.sampled_packets && samples == o.samples && packets == o.packets &&
             first_ns == o.first_ns && last_ns == o.last_ns;
    }
  };
  const auto drained = [](FlowTable& table) {
    std::vector<Flow> out;
    table.drain(0, true, false, [&](const NativeFlow& f) {
      out.push_back({f.id, f.cookies, std::vector<uint32_t>(f.words, f.words + packet_fields::kWords), f.texts,
                     f.sampled_packets, f.samples, f.packets, f.first_ns, f.last_ns});
    });
    return out;
  };
  FlowTable batched(options());
  FlowTable fed(options());
  double now_ms = 0;
  for (const std::vector<SampleSpec>& run : runs) {
    add(batched, run, now_ms);
    const BuiltBatch b = build(run);
    fed.start_run(now_ms);
    size_t offset = 0;
    for (uint32_t i = 0; i < b.batch.count; i++) {
      Record r;
      if (!CHECK(read_record(b.view(), offset, r))) return;
      offset += r.length;
      SampleToGroup sample;
      sample.data = r.data;
      sample.data_length = r.data_length;
      sample.cookie = r.cookie;
      sample.cookie_length = r.cookie_length;
      sample.group = run[i].group;
      sample.rate = run[i].rate;
      sample.probability = run[i].probability;
      sample.proto = 0x0800;
      sample.kernel_ns = run[i].time_ns;
      fed.add(sample, now_ms, 0);
    }
    now_ms += 20;
  }
  const std::vector<Flow> expected = drained(batched);
  CHECK_EQ(expected.size(), 4u);
  CHECK(drained(fed) == expected);
}

}  // namespace
}  // namespace ovnpsample::testing
