#include "wire/sample_batch.h"

#include <cstring>

namespace ovnpsample {

namespace {

namespace record = layout::record;
namespace tunnel_block = layout::tunnel_block;

// Host order, as batch_layout.h declares.
template <typename T>
void store(uint8_t* base, uint32_t offset, T value) {
  std::memcpy(base + offset, &value, sizeof value);
}

size_t align8(size_t n) { return (n + 7) & ~size_t{7}; }

// Appends `range` of `source` to `bytes`; returns its offset from `record_at`.
uint32_t append_bytes(std::vector<uint8_t>& bytes, size_t record_at, const uint8_t* source, ByteRange range) {
  const auto offset = static_cast<uint32_t>(bytes.size() - record_at);
  bytes.insert(bytes.end(), source + range.offset, source + range.offset + range.length);
  return offset;
}

uint32_t append_tunnel(std::vector<uint8_t>& bytes, size_t record_at, const Tunnel& t, const uint8_t* source) {
  bytes.resize(align8(bytes.size()), 0);
  const size_t at = bytes.size();
  bytes.resize(at + tunnel_block::kBytes, 0);
  const uint32_t geneve = append_bytes(bytes, record_at, source, t.geneve_opts);
  const uint32_t erspan = append_bytes(bytes, record_at, source, t.erspan_opts);
  uint8_t* b = bytes.data() + at;
  store(b, tunnel_block::kPresent, t.present);
  store(b, tunnel_block::kVxlanGbp, t.vxlan_gbp);
  store(b, tunnel_block::kId, t.id);
  std::memcpy(b + tunnel_block::kIpv4Src, t.ipv4_src, sizeof t.ipv4_src);
  std::memcpy(b + tunnel_block::kIpv4Dst, t.ipv4_dst, sizeof t.ipv4_dst);
  std::memcpy(b + tunnel_block::kIpv6Src, t.ipv6_src, sizeof t.ipv6_src);
  std::memcpy(b + tunnel_block::kIpv6Dst, t.ipv6_dst, sizeof t.ipv6_dst);
  store(b, tunnel_block::kTos, t.tos);
  store(b, tunnel_block::kTtl, t.ttl);
  store(b, tunnel_block::kTpSrc, t.tp_src);
  store(b, tunnel_block::kTpDst, t.tp_dst);
  store(b, tunnel_block::kGeneveOffset, geneve);
  store(b, tunnel_block::kGeneveLength, t.geneve_opts.length);
  store(b, tunnel_block::kErspanOffset, erspan);
  store(b, tunnel_block::kErspanLength, t.erspan_opts.length);
  return static_cast<uint32_t>(at - record_at);
}

}  // namespace

void SampleBatch::append(const Message& m, const uint8_t* source, bool has_nsid, int32_t nsid) {
  const size_t at = bytes.size();  // 8-aligned: every message is padded to 8
  bytes.resize(at + record::kBytes, 0);
  const bool has_tunnel = (m.present & (1u << kAttrTunnel)) != 0;
  const uint32_t data = append_bytes(bytes, at, source, m.data);
  const uint32_t cookie = append_bytes(bytes, at, source, m.user_cookie);
  const uint32_t tunnel = has_tunnel ? append_tunnel(bytes, at, m.tunnel, source) : 0;
  bytes.resize(align8(bytes.size()), 0);

  uint8_t* r = bytes.data() + at;
  uint32_t flags = (m.probability ? record::kFlagProbability : 0) | (has_nsid ? record::kFlagNsid : 0) |
                   (has_tunnel ? record::kFlagTunnel : 0);
  store(r, record::kPresent, m.present);
  store(r, record::kKindCmdFlags, static_cast<uint32_t>(m.kind) | uint32_t{m.cmd} << 8 | flags);
  store(r, record::kGroup, m.group);
  store(r, record::kGroupSeq, m.group_seq);
  store(r, record::kIfindexes, uint32_t{m.iifindex} | uint32_t{m.oifindex} << 16);
  store(r, record::kOrigsize, m.origsize);
  store(r, record::kRate, m.rate);
  store(r, record::kGroupRefcount, m.group_refcount);
  store(r, record::kOutTcProto, uint32_t{m.out_tc} | uint32_t{m.proto} << 16);
  store(r, record::kNsid, nsid);
  store(r, record::kTimestamp, m.timestamp);
  store(r, record::kLatency, m.latency);
  store(r, record::kOutTcOcc, m.out_tc_occ);
  store(r, record::kDataOffset, data);
  store(r, record::kDataLength, m.data.length);
  store(r, record::kCookieOffset, cookie);
  store(r, record::kCookieLength, m.user_cookie.length);
  store(r, record::kTunnelOffset, tunnel);
  store(r, record::kLength, static_cast<uint32_t>(bytes.size() - at));
  count++;
}

}  // namespace ovnpsample
