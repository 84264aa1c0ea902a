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
