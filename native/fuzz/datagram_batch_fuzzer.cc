// libFuzzer target for the whole path of a datagram through the reader thread's pure code:
// datagrams as the socket returns them (sender, nsid, MSG_TRUNC fuzzed too) → the datagram
// policy → the parser → SampleBatch::append → batches handed over (and taken by JavaScript)
// as the reader does → every record read back as src/psample/batch.ts and sample.ts read it
// (tests/batch_readback.h). Traps when a read would leave the batch or its record, when a record
// disagrees with the message it came from, or when the records and the counters disagree.
// Input format: datagram_batch_input.h.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "../tests/batch_readback.h"
#include "datagram_batch_input.h"
#include "socket/datagram_policy.h"

namespace {

using namespace ovnpsample;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "datagram_batch: %s\n", what.c_str());
  __builtin_trap();
}

bool is_event(const Message& m) { return m.kind == MessageKind::kSample || m.kind == MessageKind::kGroup; }

// The reader's side, as reader.cc plays it, with JavaScript taking batches when the input says.
class Sink final : public DatagramSink {
 public:
  Sink(const fuzzing::BatchSetup& setup, const std::vector<Message>& parsed) : setup_(setup), parsed_(parsed) {}

  uint64_t queued_messages() const override { return queued_messages_; }
  size_t queued_bytes() const override { return queued_bytes_; }
  SampleBatch& batch() override { return *building_; }

  // The record just appended starts where the batch ended before; it must be one of the
  // datagram's events, in order.
  void appended() override {
    appends_++;
    if (queued_messages_ + building_->count > setup_.queue_capacity) fail("appended past the queue capacity");
    if (queued_bytes_ + record_start_ >= setup_.queue_bytes_limit) fail("appended past the queue byte limit");
    std::vector<testing::ReadRecord> read;
    if (auto wrong =
            testing::read_batch(building_->bytes.data() + record_start_, building_->size() - record_start_, 1, read)) {
      fail("the new record: " + *wrong);
    }
    for (;; next_message_++) {
      if (next_message_ >= parsed_.size()) fail("a record matches no event of its datagram, in order");
      const Message& m = parsed_[next_message_];
      if (is_event(m) && !testing::record_differs(read[0], m, datagram_->data, datagram_->has_nsid, datagram_->nsid))
        break;
    }
    next_message_++;
    record_start_ = building_->size();
    if (setup_.hand_over_bytes != 0 && building_->size() >= setup_.hand_over_bytes) hand_over();
  }

  void handle_controller(const uint8_t*, size_t) override { controller_calls_++; }

  void begin(const fuzzing::FuzzDatagram& datagram) {
    datagram_ = &datagram;
    next_message_ = 0;
    appends_ = 0;
    controller_calls_ = 0;
  }

  void hand_over() {
    if (building_->count == 0) return;
    queued_messages_ += building_->count;
    queued_bytes_ += building_->size();
    queue_.push_back(std::move(building_));
    building_ = std::make_unique<SampleBatch>();
    record_start_ = 0;
  }

  // JavaScript takes the queue and reads every record, walking by `length` as batch.ts does.
  uint64_t take() {
    uint64_t records = 0;
    for (const auto& batch : queue_) {
      std::vector<testing::ReadRecord> read;
      if (auto wrong = testing::read_batch(batch->bytes.data(), batch->size(), batch->count, read)) fail(*wrong);
      records += read.size();
    }
    queue_.clear();
    queued_messages_ = 0;
    queued_bytes_ = 0;
    return records;
  }

  uint64_t appends() const { return appends_; }
  uint64_t controller_calls() const { return controller_calls_; }

 private:
  const fuzzing::BatchSetup& setup_;
  const std::vector<Message>& parsed_;
  const fuzzing::FuzzDatagram* datagram_ = nullptr;
  std::unique_ptr<SampleBatch> building_ = std::make_unique<SampleBatch>();
  std::vector<std::unique_ptr<SampleBatch>> queue_;
  uint64_t queued_messages_ = 0;
  size_t queued_bytes_ = 0;
  size_t record_start_ = 0;
  size_t next_message_ = 0;
  uint64_t appends_ = 0;
  uint64_t controller_calls_ = 0;
};

uint64_t delivered_or_dropped(const Stats& s) { return s[kFilteredOut] + s[kCloseDiscards] + s[kQueueDrops]; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t size) {
  fuzzing::BatchSetup setup;
  size_t at = fuzzing::read_setup(input, size, setup);
  if (at == 0) return 0;
  const DatagramPolicy policy{setup.kernel_only, setup.groups,         static_cast<uint16_t>(setup.any_family ? 0 : 34),
                              setup.closing,     setup.queue_capacity, setup.queue_bytes_limit};
  std::vector<Message> parsed;
  Stats counting{};
  Sink sink(setup, parsed);
  uint64_t appended = 0;
  uint64_t taken = 0;
  fuzzing::FuzzDatagram d;
  while ((at = fuzzing::read_datagram(input, size, at, d)) != 0) {
    if (d.take_before) taken += sink.take();
    const Stats before = counting;
    parsed.clear();
    sink.begin(d);
    handle_datagram(policy, {d.data, d.length, d.truncated, d.from_kernel_port, d.has_nsid, d.nsid}, parsed, counting,
                    sink);
    appended += sink.appends();

    if (counting[kDatagrams] != before[kDatagrams] + 1) fail("the datagram was not counted once");
    const bool refused = d.truncated || (setup.kernel_only && !d.from_kernel_port);
    if (refused) {
      if (!parsed.empty() || sink.appends() != 0) fail("a refused datagram was parsed or delivered");
      const Stat why = d.truncated ? kMalformed : kRejectedSender;
      Stats expected = before;
      expected[kDatagrams]++;
      expected[why]++;
      if (counting != expected) fail("a refused datagram was counted as something else too");
      continue;
    }
    uint64_t events = 0;
    uint64_t controllers = 0;
    for (const Message& m : parsed) {
      events += is_event(m);
      controllers += m.kind == MessageKind::kController;
    }
    if (sink.appends() + delivered_or_dropped(counting) - delivered_or_dropped(before) != events) {
      fail("events parsed != records appended + filtered out + close discards + queue drops");
    }
    if (counting[kControlMessages] - before[kControlMessages] != parsed.size() - events)
      fail("control messages miscounted");
    if (sink.controller_calls() != (d.has_nsid || setup.closing ? 0 : controllers))
      fail("controller messages mishandled");
    if (setup.closing && sink.appends() != 0) fail("delivered while closing");
    if (setup.groups.empty() && counting[kFilteredOut] != before[kFilteredOut])
      fail("filtered with every group wanted");
    if (setup.queue_capacity == SIZE_MAX && setup.queue_bytes_limit == SIZE_MAX &&
        counting[kQueueDrops] != before[kQueueDrops]) {
      fail("queue drops without a limit");
    }
  }
  sink.hand_over();
  taken += sink.take();
  if (taken != appended) fail("records read back != records appended");
  return 0;
}
