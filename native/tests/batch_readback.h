// Reads a SampleBatch back the way JavaScript does (src/psample/batch.ts walks the records by
// their `length`, src/psample/sample.ts reads each field at its offset from batch_layout.h), and
// says where a read would leave the batch, where JavaScript would throw, or where a record
// disagrees with the message it was written from. Stricter than JavaScript in one respect: every
// read must stay inside its own record's region, as PsampleSample.slice() assumes (it copies only
// `length` bytes).
#pragma once

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "wire/batch_layout.h"
#include "wire/psample_parser.h"

namespace ovnpsample::testing {

// One message as JavaScript sees it: the numbers, and where its byte fields lie in the batch.
struct ReadRecord {
  size_t at = 0;      // where the record starts
  size_t length = 0;  // record + payload
  uint32_t present = 0;
  uint32_t kind_cmd_flags = 0;
  uint32_t group = 0, group_seq = 0, ifindexes = 0, origsize = 0, rate = 0, group_refcount = 0, out_tc_proto = 0;
  int32_t nsid = 0;
  uint64_t timestamp = 0, latency = 0, out_tc_occ = 0;
  const uint8_t* data = nullptr;
  uint32_t data_length = 0;
  const uint8_t* cookie = nullptr;
  uint32_t cookie_length = 0;
  const uint8_t* tunnel_block = nullptr;  // when the record's tunnel flag is set
  const uint8_t* geneve = nullptr;        // when the tunnel block's present has kTunGeneveOpts
  uint32_t geneve_length = 0;
  const uint8_t* erspan = nullptr;  // likewise kTunErspanOpts
  uint32_t erspan_length = 0;
};

namespace readback {

template <typename T>
T load(const uint8_t* at) {
  T value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

// [offset, offset + length) inside [first, end): in 64 bits, as JavaScript's numbers do not wrap.
inline bool within(uint64_t offset, uint64_t length, uint64_t first, uint64_t end) {
  return offset >= first && offset <= end && length <= end - offset;
}

}  // namespace readback

// Reads the `count` records of `bytes[0, size)`; fills `out` or returns what went wrong.
inline std::optional<std::string> read_batch(const uint8_t* bytes, size_t size, uint32_t count,
                                             std::vector<ReadRecord>& out) {
  namespace record = layout::record;
  namespace tunnel_block = layout::tunnel_block;
  using readback::load;
  using readback::within;
  out.clear();
  size_t at = 0;
  for (uint32_t i = 0; i < count; i++) {
    const std::string which = "record " + std::to_string(i) + " at " + std::to_string(at);
    if (at % 8 != 0) return which + ": not 8-byte aligned";
    if (!within(at, record::kBytes, 0, size))
      return which + ": its fields lie outside the batch of " + std::to_string(size);
    const uint8_t* r = bytes + at;
    ReadRecord rec;
    rec.at = at;
    rec.length = load<uint32_t>(r + record::kLength);
    // batch.ts nextOffset(): a length that does not move forward by a whole record throws.
    if (rec.length < record::kBytes || rec.length % 8 != 0) return which + ": length " + std::to_string(rec.length);
    if (!within(at, rec.length, 0, size)) return which + ": its region escapes the batch";
    const uint64_t end = at + rec.length;
    rec.present = load<uint32_t>(r + record::kPresent);
    rec.kind_cmd_flags = load<uint32_t>(r + record::kKindCmdFlags);
    rec.group = load<uint32_t>(r + record::kGroup);
    rec.group_seq = load<uint32_t>(r + record::kGroupSeq);
    rec.ifindexes = load<uint32_t>(r + record::kIfindexes);
    rec.origsize = load<uint32_t>(r + record::kOrigsize);
    rec.rate = load<uint32_t>(r + record::kRate);
    rec.group_refcount = load<uint32_t>(r + record::kGroupRefcount);
    rec.out_tc_proto = load<uint32_t>(r + record::kOutTcProto);
    rec.nsid = load<int32_t>(r + record::kNsid);
    rec.timestamp = load<uint64_t>(r + record::kTimestamp);
    rec.latency = load<uint64_t>(r + record::kLatency);
    rec.out_tc_occ = load<uint64_t>(r + record::kOutTcOcc);

    // sample.ts #bytes(): start = at + offset, throws past the batch.
    const auto field_bytes = [&](uint32_t offset_field, uint32_t length, const uint8_t*& where,
                                 const char* name) -> std::optional<std::string> {
      const uint64_t start = at + uint64_t{load<uint32_t>(r + offset_field)};
      if (!within(start, length, at + record::kBytes, end)) return which + ": " + name + " outside its record";
      where = bytes + start;
      return std::nullopt;
    };
    rec.data_length = load<uint32_t>(r + record::kDataLength);
    if (auto wrong = field_bytes(record::kDataOffset, rec.data_length, rec.data, "data")) return wrong;
    rec.cookie_length = load<uint32_t>(r + record::kCookieLength);
    if (rec.cookie_length > 0) {
      if (auto wrong = field_bytes(record::kCookieOffset, rec.cookie_length, rec.cookie, "userCookie")) return wrong;
    }
    if (rec.kind_cmd_flags & record::kFlagTunnel) {
      const uint64_t block = at + uint64_t{load<uint32_t>(r + record::kTunnelOffset)};
      if (block % 8 != 0 || !within(block, tunnel_block::kBytes, at + record::kBytes, end)) {
        return which + ": tunnel block outside its record";
      }
      rec.tunnel_block = bytes + block;
      const uint32_t tunnel_present = load<uint32_t>(rec.tunnel_block + tunnel_block::kPresent);
      // sample.ts readTunnel() optionBytes(): record + offset, read only when present says so.
      const auto options = [&](uint32_t bit, uint32_t offset_field, uint32_t length_field, const uint8_t*& where,
                               uint32_t& length, const char* name) -> std::optional<std::string> {
        if (!(tunnel_present & (1u << bit))) return std::nullopt;
        const uint64_t start = at + uint64_t{load<uint32_t>(rec.tunnel_block + offset_field)};
        length = load<uint32_t>(rec.tunnel_block + length_field);
        if (!within(start, length, at + record::kBytes, end)) return which + ": " + name + " outside its record";
        where = bytes + start;
        return std::nullopt;
      };
      if (auto wrong = options(kTunGeneveOpts, tunnel_block::kGeneveOffset, tunnel_block::kGeneveLength, rec.geneve,
                               rec.geneve_length, "geneveOptions")) {
        return wrong;
      }
      if (auto wrong = options(kTunErspanOpts, tunnel_block::kErspanOffset, tunnel_block::kErspanLength, rec.erspan,
                               rec.erspan_length, "erspanOptions")) {
        return wrong;
      }
    }
    out.push_back(rec);
    at = end;
  }
  if (at != size)
    return std::to_string(count) + " records end at " + std::to_string(at) + " in a batch of " + std::to_string(size);
  return std::nullopt;
}

// Whether `rec` says what `m`, parsed from `source`, said (with the datagram's nsid, if any).
inline std::optional<std::string> record_differs(const ReadRecord& rec, const Message& m, const uint8_t* source,
                                                 bool has_nsid, int32_t nsid) {
  namespace record = layout::record;
  namespace tunnel_block = layout::tunnel_block;
  using readback::load;
  const auto same_bytes = [&](const uint8_t* got, uint32_t got_length, ByteRange want) {
    return got_length == want.length && (want.length == 0 || std::memcmp(got, source + want.offset, want.length) == 0);
  };
  const bool has_tunnel = (m.present & (1u << kAttrTunnel)) != 0;
  const uint32_t flags = (m.probability ? record::kFlagProbability : 0) | (has_nsid ? record::kFlagNsid : 0) |
                         (has_tunnel ? record::kFlagTunnel : 0);
  if (rec.kind_cmd_flags != (static_cast<uint32_t>(m.kind) | uint32_t{m.cmd} << 8 | flags))
    return "kind, command or flags";
  if (rec.present != m.present) return "present";
  if (rec.group != m.group || rec.group_seq != m.group_seq) return "group or groupSeq";
  if (rec.ifindexes != (uint32_t{m.iifindex} | uint32_t{m.oifindex} << 16)) return "ifindexes";
  if (rec.origsize != m.origsize || rec.rate != m.rate || rec.group_refcount != m.group_refcount) {
    return "origsize, rate or groupRefcount";
  }
  if (rec.out_tc_proto != (uint32_t{m.out_tc} | uint32_t{m.proto} << 16)) return "outTc or proto";
  if (has_nsid && rec.nsid != nsid) return "nsid";
  if (rec.timestamp != m.timestamp || rec.latency != m.latency || rec.out_tc_occ != m.out_tc_occ) {
    return "timestamp, latency or outTcOcc";
  }
  if (!same_bytes(rec.data, rec.data_length, m.data)) return "data";
  if (!same_bytes(rec.cookie, rec.cookie_length, m.user_cookie)) return "userCookie";
  if (!has_tunnel) return std::nullopt;
  const Tunnel& t = m.tunnel;
  const uint8_t* b = rec.tunnel_block;
  if (load<uint32_t>(b + tunnel_block::kPresent) != t.present ||
      load<uint32_t>(b + tunnel_block::kVxlanGbp) != t.vxlan_gbp || load<uint64_t>(b + tunnel_block::kId) != t.id ||
      std::memcmp(b + tunnel_block::kIpv4Src, t.ipv4_src, 4) != 0 ||
      std::memcmp(b + tunnel_block::kIpv4Dst, t.ipv4_dst, 4) != 0 ||
      std::memcmp(b + tunnel_block::kIpv6Src, t.ipv6_src, 16) != 0 ||
      std::memcmp(b + tunnel_block::kIpv6Dst, t.ipv6_dst, 16) != 0 || b[tunnel_block::kTos] != t.tos ||
      b[tunnel_block::kTtl] != t.ttl || load<uint16_t>(b + tunnel_block::kTpSrc) != t.tp_src ||
      load<uint16_t>(b + tunnel_block::kTpDst) != t.tp_dst) {
    return "tunnel";
  }
  if ((t.present & (1u << kTunGeneveOpts)) && !same_bytes(rec.geneve, rec.geneve_length, t.geneve_opts))
    return "geneveOptions";
  if ((t.present & (1u << kTunErspanOpts)) && !same_bytes(rec.erspan, rec.erspan_length, t.erspan_opts))
    return "erspanOptions";
  return std::nullopt;
}

}  // namespace ovnpsample::testing
