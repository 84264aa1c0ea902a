// A psample batch record (batch_layout.h) read for the line writers (sample_json.cc,
// sample_text.cc): every read checked against the batch, so a record that lies is refused, never
// read outside [base, base + size). Pure C++ (no N-API).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "wire/batch_layout.h"
#include "wire/psample_parser.h"

namespace ovnpsample {

// OVS: obs_domain_id then obs_point_id, big-endian; OVN: app id << 24 | datapath key.
constexpr uint32_t kOvsCookieBytes = 8;
constexpr char kPsampleCommands[][10] = {"sample", "get-group", "new-group", "del-group"};

inline uint8_t byte_swap(uint8_t v) { return v; }
inline uint16_t byte_swap(uint16_t v) { return __builtin_bswap16(v); }
inline uint32_t byte_swap(uint32_t v) { return __builtin_bswap32(v); }
inline uint64_t byte_swap(uint64_t v) { return __builtin_bswap64(v); }

// A batch, every read checked against its end.
struct Batch {
  const uint8_t* base;
  size_t size;
  bool swap;

  // [offset, offset + length) lies in the batch (in 64 bits: offsets are sums of record fields).
  bool holds(uint64_t offset, uint64_t length) const { return offset <= size && length <= size - offset; }

  template <typename T>
  T load(size_t at) const {
    T value;
    std::memcpy(&value, base + at, sizeof value);
    return swap ? byte_swap(value) : value;
  }
};

// One record's fields, its byte ranges checked.
struct Record {
  size_t at = 0;
  uint32_t length = 0;
  uint32_t present = 0;
  uint32_t kind_cmd_flags = 0;
  const uint8_t* data = nullptr;
  uint32_t data_length = 0;
  const uint8_t* cookie = nullptr;
  uint32_t cookie_length = 0;
  size_t tunnel = 0;  // the tunnel block's offset in the batch, when the record has one
  const uint8_t* geneve = nullptr;
  uint32_t geneve_length = 0;
  const uint8_t* erspan = nullptr;
  uint32_t erspan_length = 0;

  uint32_t command() const { return (kind_cmd_flags >> 8) & 0xff; }
  // As PsampleSample.command reads it: a command it does not know is a sample.
  bool is_sample() const { return command() == 0 || command() >= 4; }
  const char* command_name() const { return kPsampleCommands[command() < 4 ? command() : 0]; }
  bool has(uint32_t attr) const { return (present & (1u << attr)) != 0; }
  bool flag(uint32_t bit) const { return (kind_cmd_flags & bit) != 0; }
};

// A byte range whose offset counts from the record at `at`.
inline bool read_range(const Batch& b, size_t at, size_t offset_field, size_t length_field, const uint8_t*& bytes,
                       uint32_t& length) {
  const uint64_t offset = uint64_t{at} + b.load<uint32_t>(offset_field);
  length = b.load<uint32_t>(length_field);
  if (!b.holds(offset, length)) return false;
  bytes = b.base + offset;
  return true;
}

// False when the record at `at` reaches outside the batch.
inline bool read_record(const Batch& b, size_t at, Record& r) {
  namespace record = layout::record;
  namespace tunnel_block = layout::tunnel_block;
  if (!b.holds(at, record::kBytes)) return false;
  r.at = at;
  r.length = b.load<uint32_t>(at + record::kLength);
  // A length that does not move past the record could only come from a corrupt batch.
  if (r.length < record::kBytes) return false;
  r.present = b.load<uint32_t>(at + record::kPresent);
  r.kind_cmd_flags = b.load<uint32_t>(at + record::kKindCmdFlags);
  if (!read_range(b, at, at + record::kDataOffset, at + record::kDataLength, r.data, r.data_length) ||
      !read_range(b, at, at + record::kCookieOffset, at + record::kCookieLength, r.cookie, r.cookie_length))
    return false;
  if (r.flag(record::kFlagTunnel)) {
    const uint64_t tunnel = uint64_t{at} + b.load<uint32_t>(at + record::kTunnelOffset);
    if (!b.holds(tunnel, tunnel_block::kBytes)) return false;
    r.tunnel = static_cast<size_t>(tunnel);
    const uint32_t tunnel_present = b.load<uint32_t>(r.tunnel + tunnel_block::kPresent);
    if ((tunnel_present & (1u << kTunGeneveOpts)) != 0 &&
        !read_range(b, at, r.tunnel + tunnel_block::kGeneveOffset, r.tunnel + tunnel_block::kGeneveLength, r.geneve,
                    r.geneve_length))
      return false;
    if ((tunnel_present & (1u << kTunErspanOpts)) != 0 &&
        !read_range(b, at, r.tunnel + tunnel_block::kErspanOffset, r.tunnel + tunnel_block::kErspanLength, r.erspan,
                    r.erspan_length))
      return false;
  }
  return true;
}

inline uint32_t big_endian_u32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}

}  // namespace ovnpsample
