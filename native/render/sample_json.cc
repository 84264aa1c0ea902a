#include "render/sample_json.h"

#include "packet/address_text.h"
#include "packet/packet_json.h"
#include "render/line_out.h"
#include "wire/batch_layout.h"
#include "wire/batch_record.h"

namespace ovnpsample {

namespace {

namespace record = layout::record;
namespace tunnel_block = layout::tunnel_block;

// A 64-bit number as a JSON string: JavaScript's numbers are exact only below 2^53.
template <typename Out>
void append_decimal_string(Out& out, uint64_t value) {
  out += '"';
  append_number(out, value);
  out += '"';
}

template <typename Out>
void append_ipv4(Out& out, const uint8_t* a) {
  char text[kIpv4TextMax];
  out += std::string_view(text, format_ipv4(text, a));
}

template <typename Out>
void append_ipv6(Out& out, const uint8_t* a) {
  char text[kIpv6TextMax];
  out += std::string_view(text, format_ipv6(text, a));
}

// The tunnel object with its members in PsampleTunnel's order.
template <typename Out>
void append_tunnel(Out& out, const Batch& b, const Record& r) {
  const size_t t = r.tunnel;
  const uint32_t present = b.load<uint32_t>(t + tunnel_block::kPresent);
  const auto has = [present](uint32_t attr) { return (present & (1u << attr)) != 0; };
  bool first = true;
  const auto name = [&out, &first](const char* member) {
    out += first ? "{\"" : ",\"";
    out += member;
    out += "\":";
    first = false;
  };
  const auto address = [&](const char* member, uint32_t attr, size_t field, bool v6) {
    if (!has(attr)) return;
    name(member);
    out += '"';
    v6 ? append_ipv6(out, b.base + t + field) : append_ipv4(out, b.base + t + field);
    out += '"';
  };
  const auto flag = [&](const char* member, uint32_t attr) {
    name(member);
    out += has(attr) ? "true" : "false";
  };
  if (has(kTunId)) {
    name("id");
    append_decimal_string(out, b.load<uint64_t>(t + tunnel_block::kId));
  }
  address("ipv4Src", kTunIpv4Src, tunnel_block::kIpv4Src, false);
  address("ipv4Dst", kTunIpv4Dst, tunnel_block::kIpv4Dst, false);
  address("ipv6Src", kTunIpv6Src, tunnel_block::kIpv6Src, true);
  address("ipv6Dst", kTunIpv6Dst, tunnel_block::kIpv6Dst, true);
  if (has(kTunTos)) {
    name("tos");
    append_number(out, unsigned{b.load<uint8_t>(t + tunnel_block::kTos)});
  }
  if (has(kTunTtl)) {
    name("ttl");
    append_number(out, unsigned{b.load<uint8_t>(t + tunnel_block::kTtl)});
  }
  if (has(kTunTpSrc)) {
    name("tpSrc");
    append_number(out, b.load<uint16_t>(t + tunnel_block::kTpSrc));
  }
  if (has(kTunTpDst)) {
    name("tpDst");
    append_number(out, b.load<uint16_t>(t + tunnel_block::kTpDst));
  }
  flag("dontFragment", kTunDontFragment);
  flag("csum", kTunCsum);
  flag("oam", kTunOam);
  flag("ipv4InfoBridge", kTunIpv4InfoBridge);
  if (has(kTunGeneveOpts)) {
    name("geneveOptions");
    out += '"';
    append_hex(out, r.geneve, r.geneve_length);
    out += '"';
  }
  if (has(kTunVxlanOpts)) {
    name("vxlanGbp");
    append_number(out, b.load<uint32_t>(t + tunnel_block::kVxlanGbp));
  }
  if (has(kTunErspanOpts)) {
    name("erspanOptions");
    out += '"';
    append_hex(out, r.erspan, r.erspan_length);
    out += '"';
  }
  out += '}';
}

// Everything of a line but its packet and event members and the closing brace.
template <typename Out>
void append_fields(Out& out, const Batch& b, const Record& r) {
  const size_t at = r.at;
  out += "{\"command\":\"";
  out += r.command_name();
  out += "\",\"group\":";
  append_number(out, b.load<uint32_t>(at + record::kGroup));
  out += ",\"groupSeq\":";
  append_number(out, b.load<uint32_t>(at + record::kGroupSeq));
  const uint32_t ifindexes = b.load<uint32_t>(at + record::kIfindexes);
  out += ",\"iifindex\":";
  append_number(out, ifindexes & 0xffff);
  if (r.has(kAttrOifindex)) {
    out += ",\"oifindex\":";
    append_number(out, ifindexes >> 16);
  }
  out += ",\"origSize\":";
  append_number(out, b.load<uint32_t>(at + record::kOrigsize));
  out += ",\"rate\":";
  append_number(out, b.load<uint32_t>(at + record::kRate));
  out += r.flag(record::kFlagProbability) ? ",\"probability\":true" : ",\"probability\":false";
  out += ",\"timestampNs\":";
  append_decimal_string(out, b.load<uint64_t>(at + record::kTimestamp));
  if (r.has(kAttrLatency)) {
    out += ",\"latencyNs\":";
    append_decimal_string(out, b.load<uint64_t>(at + record::kLatency));
  }
  const uint32_t out_tc_proto = b.load<uint32_t>(at + record::kOutTcProto);
  if (r.has(kAttrOutTc)) {
    out += ",\"outTc\":";
    append_number(out, out_tc_proto & 0xffff);
  }
  if (r.has(kAttrOutTcOcc)) {
    out += ",\"outTcOcc\":";
    append_decimal_string(out, b.load<uint64_t>(at + record::kOutTcOcc));
  }
  out += ",\"proto\":";
  append_number(out, out_tc_proto >> 16);
  out += ",\"data\":\"";
  append_hex(out, r.data, r.data_length);
  out += '"';
  if (r.cookie_length > 0) {
    out += ",\"userCookie\":\"";
    append_hex(out, r.cookie, r.cookie_length);
    out += '"';
  }
  if (r.has(kAttrGroupRefcount)) {
    out += ",\"groupRefcount\":";
    append_number(out, b.load<uint32_t>(at + record::kGroupRefcount));
  }
  if (r.flag(record::kFlagTunnel)) {
    out += ",\"tunnel\":";
    append_tunnel(out, b, r);
  }
  if (r.flag(record::kFlagNsid)) {
    out += ",\"nsid\":";
    append_number(out, static_cast<int32_t>(b.load<uint32_t>(at + record::kNsid)));
  }
  if (r.cookie_length == kOvsCookieBytes) {
    // OVS: obs_domain_id then obs_point_id, big-endian; OVN: app id << 24 | datapath key.
    const uint32_t domain = big_endian_u32(r.cookie);
    out += ",\"obsDomainId\":";
    append_number(out, domain);
    out += ",\"obsPointId\":";
    append_number(out, big_endian_u32(r.cookie + 4));
    out += ",\"ovn\":{\"appId\":";
    append_number(out, domain >> 24);
    out += ",\"datapathKey\":";
    append_number(out, domain & 0xffffff);
    out += '}';
  }
}

}  // namespace

template <typename Out>
void append_json_line(Out& out, const Batch& b, const Record& r, std::string_view packet,
                      const std::string_view* event) {
  append_fields(out, b, r);
  out += packet;
  if (event != nullptr) {
    out += ",\"event\":";
    out += *event;
  }
  out += '}';
}

template void append_json_line(std::string&, const Batch&, const Record&, std::string_view, const std::string_view*);
template void append_json_line(LineOut&, const Batch&, const Record&, std::string_view, const std::string_view*);

void append_json_packet(std::string& out, const uint8_t* data, size_t length, uint16_t proto) {
  out += ",\"packet\":";
  append_packet_json(out, data, length, proto);
}

}  // namespace ovnpsample
