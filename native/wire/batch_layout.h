// The layout in which parsed messages cross from the reader thread to JavaScript, defined once,
// here. A batch is one buffer of messages back to back; each message is a fixed-size record
// followed by its own payload (packet bytes, cookie, tunnel block and its option bytes), and
// every offset in it counts from the start of its record, so one message's bytes are a
// self-contained region that can be copied out alone (PsampleSample.slice()). Records start at
// 8-byte aligned offsets: `length` (a multiple of 8) leads from one record to the next.
// sample_batch.cc writes it; the addon exports it (abi.record, abi.tunnelBlock);
// scripts/generate-native-abi.mjs writes it into src/native/abi.generated.ts for
// src/psample/batch.ts, which checks at load time that the addon it got agrees.
//
// Byte order: numbers are stored in the host's byte order (the reader thread writes them with
// plain stores, no conversion on the hot path), and the layout says which order that is:
// kLittleEndian, exported as abi.littleEndian, is what the JavaScript reader reads with.
#pragma once

#include <cstddef>
#include <cstdint>

// X(identifier, JavaScript name, byte offset, width in bytes, kind)
// kind: kNumber (an integer in the layout's byte order) or kBytes (copied as they came).
#define OVNPSAMPLE_RECORD_FIELDS(X)                                                             \
  X(kPresent, present, 0, 4, kNumber)           /* bit (1 << PsampleAttr) per attribute seen */ \
  X(kKindCmdFlags, kindCmdFlags, 4, 4, kNumber) /* kind | cmd << 8 | flags (kFlag*) */          \
  X(kGroup, group, 8, 4, kNumber)                                                               \
  X(kGroupSeq, groupSeq, 12, 4, kNumber)                                                        \
  X(kIfindexes, ifindexes, 16, 4, kNumber) /* iifindex | oifindex << 16 */                      \
  X(kOrigsize, origsize, 20, 4, kNumber)                                                        \
  X(kRate, rate, 24, 4, kNumber)                                                                \
  X(kGroupRefcount, groupRefcount, 28, 4, kNumber)                                              \
  X(kOutTcProto, outTcProto, 32, 4, kNumber) /* out_tc | proto << 16 */                         \
  X(kNsid, nsid, 36, 4, kNumber)             /* signed */                                       \
  X(kTimestamp, timestamp, 40, 8, kNumber)                                                      \
  X(kLatency, latency, 48, 8, kNumber)                                                          \
  X(kOutTcOcc, outTcOcc, 56, 8, kNumber)                                                        \
  X(kDataOffset, dataOffset, 64, 4, kNumber) /* from the start of the record */                 \
  X(kDataLength, dataLength, 68, 4, kNumber)                                                    \
  X(kCookieOffset, cookieOffset, 72, 4, kNumber)                                                \
  X(kCookieLength, cookieLength, 76, 4, kNumber)                                                \
  X(kTunnelOffset, tunnelOffset, 80, 4, kNumber) /* of the tunnel block, when kFlagTunnel */    \
  X(kLength, length, 84, 4, kNumber)             /* record + payload, padded to 8: where the next record starts */

// The tunnel block, after the record at an 8-byte aligned offset; option bytes follow it.
#define OVNPSAMPLE_TUNNEL_BLOCK_FIELDS(X)                                            \
  X(kPresent, present, 0, 4, kNumber) /* bit (1 << TunnelAttr) per attribute seen */ \
  X(kVxlanGbp, vxlanGbp, 4, 4, kNumber)                                              \
  X(kId, id, 8, 8, kNumber)                                                          \
  X(kIpv4Src, ipv4Src, 16, 4, kBytes)                                                \
  X(kIpv4Dst, ipv4Dst, 20, 4, kBytes)                                                \
  X(kIpv6Src, ipv6Src, 24, 16, kBytes)                                               \
  X(kIpv6Dst, ipv6Dst, 40, 16, kBytes)                                               \
  X(kTos, tos, 56, 1, kNumber)                                                       \
  X(kTtl, ttl, 57, 1, kNumber)                                                       \
  X(kTpSrc, tpSrc, 58, 2, kNumber)                                                   \
  X(kTpDst, tpDst, 60, 2, kNumber)                                                   \
  X(kGeneveOffset, geneveOffset, 64, 4, kNumber) /* from the start of the record */  \
  X(kGeneveLength, geneveLength, 68, 4, kNumber)                                     \
  X(kErspanOffset, erspanOffset, 72, 4, kNumber)                                     \
  X(kErspanLength, erspanLength, 76, 4, kNumber)

// X(identifier, JavaScript name, bit) of the record's kindCmdFlags word.
#define OVNPSAMPLE_RECORD_FLAGS(X)     \
  X(kFlagProbability, probability, 16) \
  X(kFlagNsid, nsid, 18)               \
  X(kFlagTunnel, tunnel, 19)

namespace ovnpsample::layout {

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
inline constexpr bool kLittleEndian = true;
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
inline constexpr bool kLittleEndian = false;
#else
#error "unknown byte order: the batch layout needs __BYTE_ORDER__"
#endif

enum class FieldKind : uint8_t { kNumber, kBytes };

struct Field {
  const char* name;
  uint32_t offset;
  uint32_t width;
  FieldKind kind;
};

namespace record {
#define OVNPSAMPLE_FIELD_OFFSET(id, name, offset, width, kind) inline constexpr uint32_t id = offset;
OVNPSAMPLE_RECORD_FIELDS(OVNPSAMPLE_FIELD_OFFSET)
#define OVNPSAMPLE_FLAG_BIT(id, name, bit) inline constexpr uint32_t id = 1u << (bit);
OVNPSAMPLE_RECORD_FLAGS(OVNPSAMPLE_FLAG_BIT)
#undef OVNPSAMPLE_FLAG_BIT
inline constexpr uint32_t kBytes = 88;
}  // namespace record

namespace tunnel_block {
OVNPSAMPLE_TUNNEL_BLOCK_FIELDS(OVNPSAMPLE_FIELD_OFFSET)
inline constexpr uint32_t kBytes = 80;
}  // namespace tunnel_block
#undef OVNPSAMPLE_FIELD_OFFSET

#define OVNPSAMPLE_FIELD_ENTRY(id, name, offset, width, kind) Field{#name, offset, width, FieldKind::kind},
inline constexpr Field kRecordFields[] = {OVNPSAMPLE_RECORD_FIELDS(OVNPSAMPLE_FIELD_ENTRY)};
inline constexpr Field kTunnelBlockFields[] = {OVNPSAMPLE_TUNNEL_BLOCK_FIELDS(OVNPSAMPLE_FIELD_ENTRY)};
#undef OVNPSAMPLE_FIELD_ENTRY

struct Flag {
  const char* name;
  uint32_t bit;
};
#define OVNPSAMPLE_FLAG_ENTRY(id, name, bit) Flag{#name, bit},
inline constexpr Flag kRecordFlags[] = {OVNPSAMPLE_RECORD_FLAGS(OVNPSAMPLE_FLAG_ENTRY)};
#undef OVNPSAMPLE_FLAG_ENTRY

// Fields in order, none overlapping, each aligned to its width, all inside the block.
template <size_t N>
constexpr bool well_formed(const Field (&fields)[N], uint32_t block_bytes) {
  uint32_t end = 0;
  for (const Field& f : fields) {
    if (f.offset < end || (f.kind == FieldKind::kNumber && f.offset % f.width != 0)) return false;
    end = f.offset + f.width;
  }
  return end <= block_bytes && block_bytes % 8 == 0;
}
static_assert(well_formed(kRecordFields, record::kBytes), "record fields overlap or are misaligned");
static_assert(well_formed(kTunnelBlockFields, tunnel_block::kBytes), "tunnel block fields overlap or are misaligned");

}  // namespace ovnpsample::layout
