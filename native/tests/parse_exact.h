// Parses a copy of the bytes in a heap block of exactly their size, so that AddressSanitizer
// reports any read past the end of what the parser was given.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "netlink_builder.h"
#include "wire/psample_parser.h"

namespace ovnpsample::testing {

struct Parsed {
  std::vector<Message> messages;
  Stats counters{};
  size_t returned = 0;

  size_t samples() const {
    size_t count = 0;
    for (const Message& m : messages) count += m.kind == MessageKind::kSample ? 1 : 0;
    return count;
  }
};

inline Parsed parse_exact(const uint8_t* bytes, size_t length, uint16_t family_id = kPsampleFamily) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[length]);
  std::copy(bytes, bytes + length, copy.get());
  Parsed parsed;
  parsed.returned = parse_datagram(copy.get(), length, family_id, parsed.messages, parsed.counters);
  return parsed;
}

inline Parsed parse_exact(const std::vector<uint8_t>& bytes, uint16_t family_id = kPsampleFamily) {
  return parse_exact(bytes.data(), bytes.size(), family_id);
}

inline bool within(const ByteRange& range, size_t length) {
  return range.offset <= length && range.length <= length - range.offset;
}

}  // namespace ovnpsample::testing
