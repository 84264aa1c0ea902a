// Batches of samples for the grouping's tests (aggregate/packet_grouper.h and the flow table on
// it), built by SampleBatch::append as the reader thread builds them.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "wire/batch_record.h"
#include "wire/sample_batch.h"

namespace ovnpsample::testing {

// Small enough that a double holds every nanosecond: the window's edge is exact.
inline constexpr uint64_t kT0 = 1'000'000'000'000'000;
inline constexpr uint64_t kMs = 1'000'000;

// An IPv4/UDP frame from 10.0.0.1 to 10.0.0.`host`, source port `port` (the bytes differ by both).
inline std::vector<uint8_t> frame(uint8_t host, uint16_t port) {
  std::vector<uint8_t> f(14 + 20 + 8, 0);
  f[12] = 0x08;  // IPv4
  uint8_t* ip = f.data() + 14;
  ip[0] = 0x45;
  ip[3] = 28;
  ip[8] = 64;
  ip[9] = 17;
  const uint8_t src[] = {10, 0, 0, 1};
  const uint8_t dst[] = {10, 0, 0, host};
  std::memcpy(ip + 12, src, 4);
  std::memcpy(ip + 16, dst, 4);
  uint8_t* udp = ip + 20;
  udp[0] = static_cast<uint8_t>(port >> 8);
  udp[1] = static_cast<uint8_t>(port);
  udp[3] = 53;
  udp[5] = 8;
  return f;
}

struct SampleSpec {
  std::vector<uint8_t> data;
  uint64_t time_ns = kT0;
  // The datapath key and point of an OVN cookie; datapath -1: no cookie.
  int datapath = 1;
  uint8_t point = 1;
  uint32_t rate = 1;
  bool probability = false;
  uint32_t group = 7;
  bool group_event = false;
};

struct BuiltBatch {
  SampleBatch batch;
  Batch view() const { return Batch{batch.bytes.data(), batch.bytes.size(), false}; }
};

inline BuiltBatch build(const std::vector<SampleSpec>& specs) {
  BuiltBatch out;
  for (const SampleSpec& s : specs) {
    std::vector<uint8_t> source(s.data);
    const uint8_t cookie[] = {0x02, 0, 0, static_cast<uint8_t>(s.datapath), 0, 0, 0, s.point};
    Message m;
    m.kind = s.group_event ? MessageKind::kGroup : MessageKind::kSample;
    m.cmd = s.group_event ? kCmdNewGroup : kCmdSample;
    m.group = s.group;
    m.rate = s.rate;
    m.probability = s.probability;
    m.proto = 0x0800;
    m.timestamp = s.time_ns;
    m.present = 1u << kAttrSampleGroup;
    if (!s.group_event) {
      m.data = {0, static_cast<uint32_t>(source.size())};
      m.present |= 1u << kAttrData | 1u << kAttrTimestamp;
      if (s.datapath >= 0) {
        m.user_cookie = {static_cast<uint32_t>(source.size()), sizeof cookie};
        source.insert(source.end(), cookie, cookie + sizeof cookie);
        m.present |= 1u << kAttrUserCookie;
      }
    }
    out.batch.append(m, source.data(), false, 0);
  }
  return out;
}

}  // namespace ovnpsample::testing
