#include "sample_json.h"

#include <charconv>
#include <cstring>

#include "address_text.h"
#include "batch_layout.h"
#include "packet_json.h"
#include "psample_parser.h"

namespace ovnpsample {

namespace {

namespace record = layout::record;
namespace tunnel_block = layout::tunnel_block;

constexpr uint32_t kOvsCookieBytes = 8;
constexpr char kCommands[][10] = {"sample", "get-group", "new-group", "del-group"};

uint8_t byte_swap(uint8_t v) { return v; }
uint16_t byte_swap(uint16_t v) { return __builtin_bswap16(v); }
uint32_t byte_swap(uint32_t v) { return __builtin_bswap32(v); }
uint64_t byte_swap(uint64_t v) { return __builtin_bswap64(v); }

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
  bool has(uint32_t attr) const { return (present & (1u << attr)) != 0; }
  bool flag(uint32_t bit) const { return (kind_cmd_flags & bit) != 0; }
};

// A byte range whose offset counts from the record at `at`.
bool read_range(const Batch& b, size_t at, size_t offset_field, size_t length_field, const uint8_t*& bytes,
                uint32_t& length) {
  const uint64_t offset = uint64_t{at} + b.load<uint32_t>(offset_field);
  length = b.load<uint32_t>(length_field);
  if (!b.holds(offset, length)) return false;
  bytes = b.base + offset;
  return true;
}

bool read_record(const Batch& b, size_t at, Record& r) {
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

uint32_t big_endian_u32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}

template <typename T>
void append_number(std::string& out, T value) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  out.append(digits, static_cast<size_t>(end - digits));
}

// A 64-bit number as a JSON string: JavaScript's numbers are exact only below 2^53.
void append_decimal_string(std::string& out, uint64_t value) {
  out += '"';
  append_number(out, value);
  out += '"';
}

void append_hex(std::string& out, const uint8_t* bytes, size_t length) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const size_t at = out.size();
  out.resize(at + 2 * length);
  char* p = out.data() + at;
  for (size_t i = 0; i < length; i++) {
    *p++ = kDigits[bytes[i] >> 4];
    *p++ = kDigits[bytes[i] & 15];
  }
}

void append_ipv4(std::string& out, const uint8_t* a) {
  char text[kIpv4TextMax];
  out.append(text, format_ipv4(text, a));
}

void append_ipv6(std::string& out, const uint8_t* a) {
  char text[kIpv6TextMax];
  out.append(text, format_ipv6(text, a));
}

// The tunnel object with its members in PsampleTunnel's order.
void append_tunnel(std::string& out, const Batch& b, const Record& r) {
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

}  // namespace

void EventTable::set(uint32_t obs_domain_id, uint32_t obs_point_id, std::string_view json) {
  by_ids_[uint64_t{obs_domain_id} << 32 | obs_point_id].assign(json);
}

void EventTable::set_for_cookie_length(uint32_t cookie_length, std::string_view json) {
  by_length_[cookie_length].assign(json);
}

void EventTable::clear() {
  by_ids_.clear();
  by_length_.clear();
}

const std::string* EventTable::find(uint32_t obs_domain_id, uint32_t obs_point_id) const {
  const auto found = by_ids_.find(uint64_t{obs_domain_id} << 32 | obs_point_id);
  return found == by_ids_.end() ? nullptr : &found->second;
}

const std::string* EventTable::find_for_cookie_length(uint32_t cookie_length) const {
  const auto found = by_length_.find(cookie_length);
  return found == by_length_.end() ? nullptr : &found->second;
}

const std::string& PacketMemberCache::member(const uint8_t* data, size_t length, uint16_t proto) {
  if (!valid_ || proto_ != proto || data_.size() != length || (length > 0 && std::memcmp(data_.data(), data, length) != 0)) {
    valid_ = false;
    proto_ = proto;
    data_.assign(data, data + length);
    member_.assign(",\"packet\":");
    append_packet_json(member_, data, length, proto);
    valid_ = true;
  }
  return member_;
}

namespace {

// Everything of a line but its packet and event members and the closing brace.
void append_fields(std::string& out, const Batch& b, const Record& r) {
  const size_t at = r.at;
  const uint32_t command = r.command();
  out += "{\"command\":\"";
  out += kCommands[command < 4 ? command : 0];
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

// The whole line of a record, without its '\n'.
void append_line_of(std::string& out, const Batch& b, const Record& r, const std::string_view* event,
                    PacketMemberCache& packets) {
  append_fields(out, b, r);
  if (r.is_sample()) {
    const auto proto = static_cast<uint16_t>(b.load<uint32_t>(r.at + record::kOutTcProto) >> 16);
    out += packets.member(r.data, r.data_length, proto);
  }
  if (event != nullptr) {
    out += ",\"event\":";
    out += *event;
  }
  out += '}';
}

}  // namespace

bool SampleJsonRenderer::append_line(const uint8_t* batch, size_t batch_size, size_t offset, bool little_endian,
                                     const std::string_view* event, std::string& out) {
  const Batch b{batch, batch_size, little_endian != layout::kLittleEndian};
  Record r;
  if (!read_record(b, offset, r)) return false;
  append_line_of(out, b, r, event, packet_);
  return true;
}

RenderResult SampleJsonRenderer::render(const RenderRequest& request, RenderCursor from, uint8_t* out,
                                        size_t capacity) {
  const Batch b{request.batch, request.batch_size, request.little_endian != layout::kLittleEndian};
  RenderResult result;
  result.next = from;
  while (result.next.index < request.count) {
    Record r;
    if (!read_record(b, result.next.offset, r)) {
      result.stop = RenderStop::kMalformed;
      return result;
    }
    if (!request.samples_only || r.is_sample()) {
      if (result.lines >= request.max_lines) {
        result.stop = RenderStop::kLineLimit;
        return result;
      }
      std::string_view event;
      if (request.with_events) {
        const std::string* found = r.cookie_length == kOvsCookieBytes
                                       ? events_.find(big_endian_u32(r.cookie), big_endian_u32(r.cookie + 4))
                                       : events_.find_for_cookie_length(r.cookie_length);
        if (found == nullptr) {
          result.stop = RenderStop::kMissingEvent;
          return result;
        }
        event = *found;
      }
      line_.clear();
      append_line_of(line_, b, r, request.with_events ? &event : nullptr, packet_);
      line_ += '\n';
      if (line_.size() > capacity - result.written) {
        result.stop = RenderStop::kNoRoom;
        result.needed = line_.size();
        return result;
      }
      std::memcpy(out + result.written, line_.data(), line_.size());
      result.written += line_.size();
      result.lines++;
    }
    result.next.index++;
    result.next.offset += r.length;
  }
  return result;
}

}  // namespace ovnpsample
