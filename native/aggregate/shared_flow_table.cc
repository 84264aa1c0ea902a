#include "aggregate/shared_flow_table.h"

#include <chrono>

namespace ovnpsample {

double SharedFlowTable::monotonic_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double SharedFlowTable::wall_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch()).count();
}

bool SharedFlowTable::consume(const SampleBatch& batch) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!table_) return false;
  // The reader thread writes records in this machine's order.
  table_->add(Batch{batch.bytes.data(), batch.size(), false}, batch.count, monotonic_ms(), wall_ms());
  return true;
}

bool SharedFlowTable::open_run() {
  mutex_.lock();
  if (!table_) {
    mutex_.unlock();
    return false;
  }
  run_now_ms_ = monotonic_ms();
  run_wall_ms_ = wall_ms();
  table_->start_run(run_now_ms_);
  return true;
}

void SharedFlowTable::take(const Message& m, const uint8_t* source) {
  if (m.kind != MessageKind::kSample) return;  // group events are skipped, as the per-packet path skips them
  table_->add(sample_to_group(m, source), run_now_ms_, run_wall_ms_);
}

void SharedFlowTable::close_run() { mutex_.unlock(); }

size_t SharedFlowTable::add(const Batch& batch, uint32_t count) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!table_) return 0;
  table_->add(batch, count, monotonic_ms(), wall_ms());
  return table_->pending();
}

void SharedFlowTable::close() {
  std::lock_guard<std::mutex> lock(mutex_);
  table_.reset();
}

bool SharedFlowTable::closed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !table_;
}

}  // namespace ovnpsample
