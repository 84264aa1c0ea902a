// What may take the reader thread's batches instead of JavaScript's queue: watch --aggregate's
// flow table (aggregate/shared_flow_table.h) sums them on the reader thread, so no batch is
// copied to JavaScript and no JavaScript runs per hand-off.
#pragma once

#include "wire/sample_batch.h"

namespace ovnpsample {

class BatchConsumer {
 public:
  virtual ~BatchConsumer() = default;
  // On the reader thread (or JavaScript's, for batches queued before the consumer came): takes
  // what it needs of the batch, which is reused afterwards. False once it takes nothing more
  // (closed): the reader counts the batch's messages as discarded at close.
  virtual bool consume(const SampleBatch& batch) = 0;
};

}  // namespace ovnpsample
