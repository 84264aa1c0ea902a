// The compact form in which parsed messages cross from the reader thread to JavaScript: one
// buffer of records, each followed by its payload, laid out as batch_layout.h says and read by
// src/psample/batch.ts. Reading fields from this on demand in JavaScript is several times cheaper
// than building objects property by property through N-API.
#pragma once

#include <cstdint>
#include <vector>

#include "wire/batch_layout.h"
#include "wire/psample_parser.h"

namespace ovnpsample {

struct SampleBatch {
  SampleBatch() = default;
  // Sized like the previous batch: under a flood batches are alike, and growing the vector
  // message by message cost copies and page faults on the reader thread.
  explicit SampleBatch(size_t reserve_bytes) { bytes.reserve(reserve_bytes); }

  std::vector<uint8_t> bytes;
  uint32_t count = 0;

  // Copies what JavaScript needs out of `source` (the datagram `message` was parsed from).
  void append(const Message& message, const uint8_t* source, bool has_nsid, int32_t nsid);
  size_t size() const { return bytes.size(); }
};

}  // namespace ovnpsample
