// The input format of the datagram_batch fuzzer, read by the fuzzer and written by
// make_seed_corpus. All numbers in host order.
//
//   byte 0   bit 0: only the kernel may send (a real psample socket); bit 1: closing;
//            bit 2: accept any family (family id 0, offline decoding; else psample's 34);
//            bits 3-5: how many wanted groups follow (0: all groups wanted)
//   byte 1   the batch is handed over once it holds 64 * this many bytes (0: only at the end)
//   byte 2   queue capacity in messages (0: unlimited)
//   byte 3   queue byte limit in units of 128 bytes (0: unlimited)
//   groups   u32 each
// then datagrams until the input ends, each:
//   u8       bit 0: sent from the kernel's port 0; bit 1: carries an nsid; bit 2: MSG_TRUNC;
//            bit 3: JavaScript takes every handed-over batch before this datagram arrives
//   i32      the nsid
//   u16      length (cut to what the input still holds), then that many bytes
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace ovnpsample::fuzzing {

struct BatchSetup {
  bool kernel_only = true;
  bool closing = false;
  bool any_family = false;
  std::vector<uint32_t> groups;  // at most 7
  size_t hand_over_bytes = 0;    // 0: only at the end
  size_t queue_capacity = std::numeric_limits<size_t>::max();
  size_t queue_bytes_limit = std::numeric_limits<size_t>::max();
};

struct FuzzDatagram {
  bool from_kernel_port = true;
  bool has_nsid = false;
  bool truncated = false;
  bool take_before = false;
  int32_t nsid = 0;
  const uint8_t* data = nullptr;
  size_t length = 0;
};

constexpr size_t kSetupBytes = 4;
constexpr size_t kDatagramHeaderBytes = 7;

template <typename T>
T read_host(const uint8_t* at) {
  T value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

// Reads the setup; returns where the datagrams start, or 0 when the input is too short.
inline size_t read_setup(const uint8_t* input, size_t size, BatchSetup& setup) {
  if (size < kSetupBytes) return 0;
  setup.kernel_only = input[0] & 1;
  setup.closing = input[0] & 2;
  setup.any_family = input[0] & 4;
  const size_t groups = (input[0] >> 3) & 7;
  setup.hand_over_bytes = size_t{64} * input[1];
  if (input[2] != 0) setup.queue_capacity = input[2];
  if (input[3] != 0) setup.queue_bytes_limit = size_t{128} * input[3];
  if (size < kSetupBytes + 4 * groups) return 0;
  setup.groups.clear();
  for (size_t i = 0; i < groups; i++) setup.groups.push_back(read_host<uint32_t>(input + kSetupBytes + 4 * i));
  return kSetupBytes + 4 * groups;
}

// Reads the datagram at `at`; returns where the next one starts, or 0 when none is left.
inline size_t read_datagram(const uint8_t* input, size_t size, size_t at, FuzzDatagram& d) {
  if (at + kDatagramHeaderBytes > size) return 0;
  const uint8_t flags = input[at];
  d.from_kernel_port = flags & 1;
  d.has_nsid = flags & 2;
  d.truncated = flags & 4;
  d.take_before = flags & 8;
  d.nsid = read_host<int32_t>(input + at + 1);
  const size_t declared = read_host<uint16_t>(input + at + 5);
  const size_t start = at + kDatagramHeaderBytes;
  d.data = input + start;
  d.length = declared < size - start ? declared : size - start;
  return start + d.length;
}

inline std::vector<uint8_t> write_setup(const BatchSetup& setup, uint8_t hand_over_units, uint8_t capacity,
                                        uint8_t bytes_limit_units) {
  std::vector<uint8_t> out{static_cast<uint8_t>((setup.kernel_only ? 1 : 0) | (setup.closing ? 2 : 0) |
                                                (setup.any_family ? 4 : 0) | (setup.groups.size() & 7) << 3),
                           hand_over_units, capacity, bytes_limit_units};
  for (const uint32_t group : setup.groups) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(&group);
    out.insert(out.end(), bytes, bytes + sizeof group);
  }
  return out;
}

inline void write_datagram(std::vector<uint8_t>& out, const FuzzDatagram& d, const std::vector<uint8_t>& bytes) {
  out.push_back(static_cast<uint8_t>((d.from_kernel_port ? 1 : 0) | (d.has_nsid ? 2 : 0) | (d.truncated ? 4 : 0) |
                                     (d.take_before ? 8 : 0)));
  const auto* nsid = reinterpret_cast<const uint8_t*>(&d.nsid);
  out.insert(out.end(), nsid, nsid + sizeof d.nsid);
  const auto length = static_cast<uint16_t>(bytes.size());
  const auto* len = reinterpret_cast<const uint8_t*>(&length);
  out.insert(out.end(), len, len + sizeof length);
  out.insert(out.end(), bytes.begin(), bytes.end());
}

}  // namespace ovnpsample::fuzzing
