// The compact form in which parsed messages cross from the reader thread to JavaScript:
// fixed-size records plus a payload area, read by src/psample/batch.ts with typed arrays.
// Building JS objects in JavaScript from this is several times cheaper than setting
// properties one by one through N-API. Keep the layout in sync with src/psample/batch.ts.
#pragma once

#include <cstdint>
#include <vector>

#include "psample_parser.h"

namespace ovnpsample {

namespace record {
constexpr uint32_t kWords = 24;
constexpr uint32_t kBytes = kWords * 4;
// 32-bit word indexes
constexpr uint32_t kPresent = 0;
constexpr uint32_t kKindCmdFlags = 1;  // kind | cmd << 8 | flags << 16
constexpr uint32_t kGroup = 2;
constexpr uint32_t kGroupSeq = 3;
constexpr uint32_t kIfindexes = 4;  // iifindex | oifindex << 16
constexpr uint32_t kOrigsize = 5;
constexpr uint32_t kRate = 6;
constexpr uint32_t kGroupRefcount = 7;
constexpr uint32_t kOutTcProto = 8;  // out_tc | proto << 16
constexpr uint32_t kNsid = 9;
constexpr uint32_t kTimestamp = 10;  // u64 (words 10-11)
constexpr uint32_t kLatency = 12;    // u64
constexpr uint32_t kOutTcOcc = 14;   // u64
constexpr uint32_t kDataOffset = 16;
constexpr uint32_t kDataLength = 17;
constexpr uint32_t kCookieOffset = 18;
constexpr uint32_t kCookieLength = 19;
constexpr uint32_t kTunnelOffset = 20;  // words 21-23: unused, keep the record 8-byte aligned

constexpr uint32_t kFlagProbability = 1u << 16;
constexpr uint32_t kFlagNsid = 1u << 18;
constexpr uint32_t kFlagTunnel = 1u << 19;
}  // namespace record

// Tunnel block in the payload area, 8-byte aligned; option bytes are copied after it.
namespace tunnel_block {
constexpr uint32_t kBytes = 80;
constexpr uint32_t kPresent = 0;      // u32
constexpr uint32_t kVxlanGbp = 4;     // u32
constexpr uint32_t kId = 8;           // u64
constexpr uint32_t kIpv4Src = 16;     // 4 bytes
constexpr uint32_t kIpv4Dst = 20;     // 4 bytes
constexpr uint32_t kIpv6Src = 24;     // 16 bytes
constexpr uint32_t kIpv6Dst = 40;     // 16 bytes
constexpr uint32_t kTos = 56;         // u8
constexpr uint32_t kTtl = 57;         // u8
constexpr uint32_t kTpSrc = 58;       // u16
constexpr uint32_t kTpDst = 60;       // u16
constexpr uint32_t kGeneveOffset = 64;  // u32 offset in payload, u32 length
constexpr uint32_t kErspanOffset = 72;  // u32 offset in payload, u32 length
}  // namespace tunnel_block

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
