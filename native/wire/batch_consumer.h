// What may take the reader thread's samples instead of JavaScript's queue: watch --aggregate's
// flow table (aggregate/shared_flow_table.h) sums them on the reader thread, so no batch is
// copied to JavaScript and no JavaScript runs per hand-off. The messages of each read go to it
// straight from the receive buffers (a run); batches are handed over only for what was queued
// towards JavaScript before the consumer came.
#pragma once

#include <cstdint>

#include "wire/psample_parser.h"
#include "wire/sample_batch.h"

namespace ovnpsample {

class BatchConsumer {
 public:
  virtual ~BatchConsumer() = default;
  // On the reader thread (or JavaScript's, for batches queued before the consumer came): takes
  // what it needs of the batch, which is reused afterwards. False once it takes nothing more
  // (closed): the reader counts the batch's messages as discarded at close.
  virtual bool consume(const SampleBatch& batch) = 0;

  // On the reader thread: the delivered messages of one read. open_run() holds the consumer for
  // the run (false once closed: nothing is held, the reader counts the run's messages as
  // discarded at close); take() is given each message, its ranges in `source` (the datagram,
  // reused after the run); close_run() lets go. Only the samples, and only during the run, are read.
  virtual bool open_run() = 0;
  virtual void take(const Message& message, const uint8_t* source) = 0;
  virtual void close_run() = 0;
};

}  // namespace ovnpsample
