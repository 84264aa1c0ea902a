// watch --aggregate's flow table between two threads: the psample reader thread adds each read's
// samples as it reads them (BatchConsumer), JavaScript drains it on a timer. One mutex between
// them; the reader waits out a drain, which its socket's receive buffer absorbs, and a drain
// waits out one read's run. Both read the one clock kept here: deadlines on the monotonic clock,
// the system's for samples without a kernel time.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>

#include "aggregate/flow_table.h"
#include "wire/batch_consumer.h"
#include "wire/batch_record.h"

namespace ovnpsample {

class SharedFlowTable final : public BatchConsumer {
 public:
  explicit SharedFlowTable(const FlowTableOptions& options) : table_(std::in_place, options) {}

  bool consume(const SampleBatch& batch) override;
  // The run holds the mutex from open_run() to close_run(), and one moment for all its samples.
  bool open_run() override;
  void take(const Message& message, const uint8_t* source) override;
  void close_run() override;

  // A batch JavaScript holds; returns the packets waiting in the grouping window (0 once closed).
  size_t add(const Batch& batch, uint32_t count);

  // FlowTable::drain at this moment, then its counters into `stats` (flow_table::kStatSlots).
  // False once closed (nothing visited, `stats` untouched).
  template <typename Visit>
  bool drain(bool final, bool end_interval, double* stats, Visit&& visit) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!table_) return false;
    table_->drain(monotonic_ms(), final, end_interval, visit);
    table_->take_stats(stats);
    return true;
  }

  // Frees the table; batches after it are refused. Idempotent.
  void close();
  bool closed() const;

 private:
  static double monotonic_ms();
  static double wall_ms();

  mutable std::mutex mutex_;
  std::optional<FlowTable> table_;  // empty once closed
  // The open run's moment.
  double run_now_ms_ = 0;
  double run_wall_ms_ = 0;
};

}  // namespace ovnpsample
