// The datagram policy, case by case: for each way a datagram or one of its messages can end,
// the one counter it lands in, and what reaches the batch (read back as JavaScript reads it).
#include <limits>
#include <memory>
#include <vector>

#include "batch_readback.h"
#include "check.h"
#include "netlink_builder.h"
#include "socket/datagram_policy.h"

namespace ovnpsample::testing {
namespace {

constexpr uint16_t kNlmsgError = 2;
constexpr uint16_t kNlctrlFamily = 0x10;
constexpr size_t kUnlimited = std::numeric_limits<size_t>::max();

std::vector<uint8_t> samples(std::initializer_list<uint32_t> groups) {
  NetlinkBuilder b;
  for (const uint32_t group : groups) {
    b.begin_message(kPsampleFamily).genl(kCmdSample).attr_host<uint32_t>(kAttrSampleGroup, group);
    b.attr(kAttrData, {0xde, 0xad, static_cast<uint8_t>(group)}).end_message();
  }
  return b.bytes();
}

// The reader's part: a queue of batches JavaScript has not taken, and the batch being built,
// handed over (queued, as reader.cc's flush() does) every `hand_over_every` messages when set.
struct TestSink final : DatagramSink {
  uint64_t queued = 0;
  size_t queued_byte_count = 0;
  size_t hand_over_every = 0;
  std::unique_ptr<SampleBatch> building = std::make_unique<SampleBatch>();
  std::vector<std::unique_ptr<SampleBatch>> handed_over;
  std::vector<std::vector<uint8_t>> controller_messages;

  uint64_t queued_messages() const override { return queued; }
  size_t queued_bytes() const override { return queued_byte_count; }
  SampleBatch& batch() override { return *building; }
  void appended() override {
    if (hand_over_every == 0 || building->count < hand_over_every) return;
    queued += building->count;
    queued_byte_count += building->size();
    handed_over.push_back(std::move(building));
    building = std::make_unique<SampleBatch>();
  }
  void handle_controller(const uint8_t* message, size_t len) override {
    controller_messages.emplace_back(message, message + len);
  }
};

struct Run {
  Stats counting{};
  TestSink sink;
  std::vector<Message> parsed;
  std::vector<uint32_t> groups;
  bool kernel_only = true;
  bool closing = false;
  size_t capacity = kUnlimited;
  size_t bytes_limit = kUnlimited;

  void receive(const std::vector<uint8_t>& bytes, bool from_kernel_port = true, bool has_nsid = false, int32_t nsid = 0,
               bool truncated = false) {
    const DatagramPolicy policy{kernel_only, groups, kPsampleFamily, closing, capacity, bytes_limit};
    handle_datagram(policy, {bytes.data(), bytes.size(), truncated, from_kernel_port, has_nsid, nsid}, parsed, counting,
                    sink);
  }

  // The groups of the batch being built, read back as JavaScript reads them.
  std::vector<uint32_t> delivered_groups() const {
    std::vector<ReadRecord> read;
    const SampleBatch& b = *sink.building;
    if (auto wrong = read_batch(b.bytes.data(), b.size(), b.count, read)) {
      CHECK_EQ(*wrong, std::string("a readable batch"));
      return {};
    }
    std::vector<uint32_t> groups_read;
    for (const ReadRecord& r : read) groups_read.push_back(r.group);
    return groups_read;
  }

  // Every counter but `except` is still 0.
  bool only(std::initializer_list<Stat> except) const {
    for (size_t s = 0; s < kStatCount; s++) {
      bool listed = false;
      for (const Stat e : except) listed = listed || e == s;
      if (!listed && counting[s] != 0) {
        CHECK_EQ(std::string(kStatInfo[s].name) + " = " + std::to_string(counting[s]),
                 std::string(kStatInfo[s].name) + " = 0");
        return false;
      }
    }
    return true;
  }
};

TEST_CASE("policy: a kernel sample of a wanted group is appended to the batch, its nsid with it") {
  Run run;
  run.receive(samples({7}), true, true, -2);
  CHECK_EQ(run.counting[kDatagrams], 1u);
  CHECK(run.only({kDatagrams}));
  if (!CHECK_EQ(run.sink.building->count, 1u)) return;
  std::vector<ReadRecord> read;
  const SampleBatch& b = *run.sink.building;
  CHECK(!read_batch(b.bytes.data(), b.size(), b.count, read));
  const std::vector<uint8_t> datagram = samples({7});
  CHECK(!record_differs(read[0], run.parsed[0], datagram.data(), true, -2));
  CHECK_EQ(read[0].nsid, -2);
}

TEST_CASE("policy: a truncated datagram (MSG_TRUNC) is one malformed message, not parsed") {
  Run run;
  run.receive(samples({7}), true, false, 0, true);
  CHECK_EQ(run.counting[kDatagrams], 1u);
  CHECK_EQ(run.counting[kMalformed], 1u);
  CHECK(run.only({kDatagrams, kMalformed}));
  CHECK_EQ(run.sink.building->count, 0u);
}

TEST_CASE("policy: a userspace sender on a kernel psample socket is rejected, its datagram unread") {
  Run run;
  run.receive(samples({7, 8}), false);
  CHECK_EQ(run.counting[kRejectedSender], 1u);
  CHECK(run.only({kDatagrams, kRejectedSender}));
  CHECK_EQ(run.sink.building->count, 0u);
  CHECK(run.parsed.empty());
}

TEST_CASE("policy: an injection source takes userspace senders") {
  Run run;
  run.kernel_only = false;
  run.receive(samples({7}), false);
  CHECK(run.only({kDatagrams}));
  CHECK(run.delivered_groups() == std::vector<uint32_t>{7});
}

TEST_CASE("policy: samples of unwanted groups are filtered out one by one, the rest delivered in order") {
  Run run;
  run.groups = {7, 9};
  run.receive(samples({7, 8, 9, 10}));
  CHECK_EQ(run.counting[kFilteredOut], 2u);
  CHECK(run.only({kDatagrams, kFilteredOut}));
  CHECK(run.delivered_groups() == (std::vector<uint32_t>{7, 9}));
}

TEST_CASE("policy: a garbled message is counted malformed, its neighbours still delivered") {
  NetlinkBuilder b;
  b.begin_message(kPsampleFamily).genl(kCmdSample).attr_host<uint32_t>(kAttrSampleGroup, 1).end_message();
  b.begin_message(kPsampleFamily)
      .genl(kCmdSample)
      .attr_host<uint16_t>(kAttrSampleGroup, 2)
      .end_message();  // short group
  b.begin_message(kPsampleFamily).genl(kCmdSample).attr_host<uint32_t>(kAttrSampleGroup, 3).end_message();
  Run run;
  run.receive(b.bytes());
  CHECK_EQ(run.counting[kMalformed], 1u);
  CHECK(run.only({kDatagrams, kMalformed}));
  CHECK(run.delivered_groups() == (std::vector<uint32_t>{1, 3}));
}

TEST_CASE("policy: another family's message is foreign, a netlink error a control message; neither delivered") {
  NetlinkBuilder b;
  b.begin_message(kPsampleFamily + 1).genl(kCmdSample).attr_host<uint32_t>(kAttrSampleGroup, 1).end_message();
  // struct nlmsgerr: the errno, then the header of the request it answers
  b.begin_message(kNlmsgError)
      .raw_host<int32_t>(-1)
      .raw({20, 0, 0, 0, 16, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0})
      .end_message();
  Run run;
  run.receive(b.bytes());
  CHECK_EQ(run.counting[kForeign], 1u);
  CHECK_EQ(run.counting[kControlMessages], 1u);
  CHECK(run.only({kDatagrams, kForeign, kControlMessages}));
  CHECK_EQ(run.sink.building->count, 0u);
}

TEST_CASE(
    "policy: a controller notification is a control message, handed to the reader unless a peer's copy or closing") {
  NetlinkBuilder b;
  b.begin_message(kNlctrlFamily).genl(2).end_message();
  const std::vector<uint8_t> notification = b.bytes();
  Run run;
  run.receive(notification);
  if (CHECK_EQ(run.sink.controller_messages.size(), 1u)) CHECK(run.sink.controller_messages[0] == notification);
  run.receive(notification, true, true, 5);  // a peer namespace's copy: its own socket follows it
  run.closing = true;
  run.receive(notification);
  CHECK_EQ(run.sink.controller_messages.size(), 1u);
  CHECK_EQ(run.counting[kControlMessages], 3u);
  CHECK(run.only({kDatagrams, kControlMessages}));
}

TEST_CASE("policy: while closing, wanted samples are close discards and unwanted ones still filtered out") {
  Run run;
  run.closing = true;
  run.groups = {1};
  run.receive(samples({1, 2, 1}));
  CHECK_EQ(run.counting[kCloseDiscards], 2u);
  CHECK_EQ(run.counting[kFilteredOut], 1u);
  CHECK(run.only({kDatagrams, kCloseDiscards, kFilteredOut}));
  CHECK_EQ(run.sink.building->count, 0u);
}

TEST_CASE("policy: the queue's capacity counts what waits for JavaScript and the batch being built") {
  Run run;
  run.capacity = 3;
  run.sink.queued = 1;
  run.receive(samples({1, 2, 3, 4}));
  CHECK_EQ(run.counting[kQueueDrops], 2u);
  CHECK(run.only({kDatagrams, kQueueDrops}));
  CHECK(run.delivered_groups() == (std::vector<uint32_t>{1, 2}));
}

TEST_CASE("policy: batches handed over in the middle of a datagram count against the capacity") {
  Run run;
  run.capacity = 3;
  run.sink.hand_over_every = 1;
  run.receive(samples({1, 2, 3, 4}));
  CHECK_EQ(run.sink.handed_over.size(), 3u);
  CHECK_EQ(run.counting[kQueueDrops], 1u);
  CHECK(run.only({kDatagrams, kQueueDrops}));
}

TEST_CASE("policy: the queue's byte limit drops a sample once the queue and batch reach it") {
  Run run;
  run.receive(samples({1}));
  const size_t one_record = run.sink.building->size();
  run.bytes_limit = 3 * one_record;
  run.sink.queued_byte_count = one_record;
  run.receive(samples({2, 3, 4}));
  CHECK_EQ(run.counting[kQueueDrops], 2u);
  CHECK(run.delivered_groups() == (std::vector<uint32_t>{1, 2}));
}

}  // namespace
}  // namespace ovnpsample::testing
