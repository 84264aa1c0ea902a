#include "sample_batch.h"

#include <cstring>

namespace ovnpsample {

namespace {

void store32(uint8_t* base, uint32_t word, uint32_t value) { std::memcpy(base + word * 4, &value, 4); }
void store64(uint8_t* base, uint32_t word, uint64_t value) { std::memcpy(base + word * 4, &value, 8); }

uint32_t append_bytes(std::vector<uint8_t>& payload, const uint8_t* source, ByteRange range) {
  const auto offset = static_cast<uint32_t>(payload.size());
  payload.insert(payload.end(), source + range.offset, source + range.offset + range.length);
  return offset;
}

uint32_t append_tunnel(std::vector<uint8_t>& payload, const Tunnel& t, const uint8_t* source) {
  payload.resize((payload.size() + 7) & ~size_t{7}, 0);
  const auto offset = static_cast<uint32_t>(payload.size());
  payload.resize(offset + tunnel_block::kBytes, 0);
  const uint32_t geneve = append_bytes(payload, source, t.geneve_opts);
  const uint32_t erspan = append_bytes(payload, source, t.erspan_opts);
  uint8_t* b = payload.data() + offset;
  std::memcpy(b + tunnel_block::kPresent, &t.present, 4);
  std::memcpy(b + tunnel_block::kVxlanGbp, &t.vxlan_gbp, 4);
  std::memcpy(b + tunnel_block::kId, &t.id, 8);
  std::memcpy(b + tunnel_block::kIpv4Src, t.ipv4_src, 4);
  std::memcpy(b + tunnel_block::kIpv4Dst, t.ipv4_dst, 4);
  std::memcpy(b + tunnel_block::kIpv6Src, t.ipv6_src, 16);
  std::memcpy(b + tunnel_block::kIpv6Dst, t.ipv6_dst, 16);
  b[tunnel_block::kTos] = t.tos;
  b[tunnel_block::kTtl] = t.ttl;
  std::memcpy(b + tunnel_block::kTpSrc, &t.tp_src, 2);
  std::memcpy(b + tunnel_block::kTpDst, &t.tp_dst, 2);
  const uint32_t ranges[4] = {geneve, t.geneve_opts.length, erspan, t.erspan_opts.length};
  std::memcpy(b + tunnel_block::kGeneveOffset, ranges, sizeof ranges);
  return offset;
}

}  // namespace

void SampleBatch::append(const Message& m, const uint8_t* source, bool has_nsid, int32_t nsid) {
  const size_t at = records.size();
  records.resize(at + record::kBytes, 0);
  const bool has_tunnel = (m.present & (1u << kAttrTunnel)) != 0;
  const uint32_t data = append_bytes(payload, source, m.data);
  const uint32_t cookie = append_bytes(payload, source, m.user_cookie);
  const uint32_t tunnel = has_tunnel ? append_tunnel(payload, m.tunnel, source) : 0;

  uint8_t* r = records.data() + at;
  uint32_t flags = (m.probability ? record::kFlagProbability : 0) | (has_nsid ? record::kFlagNsid : 0) |
                   (has_tunnel ? record::kFlagTunnel : 0);
  store32(r, record::kPresent, m.present);
  store32(r, record::kKindCmdFlags, static_cast<uint32_t>(m.kind) | uint32_t{m.cmd} << 8 | flags);
  store32(r, record::kGroup, m.group);
  store32(r, record::kGroupSeq, m.group_seq);
  store32(r, record::kIfindexes, uint32_t{m.iifindex} | uint32_t{m.oifindex} << 16);
  store32(r, record::kOrigsize, m.origsize);
  store32(r, record::kRate, m.rate);
  store32(r, record::kGroupRefcount, m.group_refcount);
  store32(r, record::kOutTcProto, uint32_t{m.out_tc} | uint32_t{m.proto} << 16);
  store32(r, record::kNsid, static_cast<uint32_t>(nsid));
  store64(r, record::kTimestamp, m.timestamp);
  store64(r, record::kLatency, m.latency);
  store64(r, record::kOutTcOcc, m.out_tc_occ);
  store32(r, record::kDataOffset, data);
  store32(r, record::kDataLength, m.data.length);
  store32(r, record::kCookieOffset, cookie);
  store32(r, record::kCookieLength, m.user_cookie.length);
  store32(r, record::kTunnelOffset, tunnel);
  count++;
}

}  // namespace ovnpsample
