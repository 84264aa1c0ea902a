// The compact form in which parsed messages cross from the reader thread to JavaScript:
// fixed-size records plus a payload area, laid out as batch_layout.h says and read by
// src/psample/batch.ts. Building JS objects in JavaScript from this is several times cheaper
// than setting properties one by one through N-API.
#pragma once

#include <cstdint>
#include <vector>

#include "batch_layout.h"
#include "psample_parser.h"

namespace ovnpsample {

struct SampleBatch {
  SampleBatch() = default;
  // Sized like the previous batch: under a flood batches are alike, and growing the vectors
  // message by message cost copies and page faults on the reader thread.
  SampleBatch(size_t records_bytes, size_t payload_bytes) {
    records.reserve(records_bytes);
    payload.reserve(payload_bytes);
  }

  std::vector<uint8_t> records;
  std::vector<uint8_t> payload;
  uint32_t count = 0;

  // Copies what JavaScript needs out of `source` (the datagram `message` was parsed from).
  void append(const Message& message, const uint8_t* source, bool has_nsid, int32_t nsid);
  size_t bytes() const { return records.size() + payload.size(); }
};

}  // namespace ovnpsample
