#include "wire/psample_parser.h"

#include <cstring>
#include <limits>

#include "wire/nla.h"

namespace ovnpsample {
namespace {

// include/uapi/linux/netlink.h and genetlink.h.
constexpr size_t kNlmsgHeaderLen = 16;
constexpr size_t kGenlHeaderLen = 4;
constexpr size_t kNlmsgerrLen = 4 + kNlmsgHeaderLen;
constexpr uint16_t kNlmsgNoop = 1;
constexpr uint16_t kNlmsgError = 2;
constexpr uint16_t kNlmsgDone = 3;
constexpr uint16_t kNlmsgOverrun = 4;
constexpr uint16_t kNlmsgMinType = 0x10;
constexpr uint16_t kGenlIdCtrl = 0x10;

// include/uapi/linux/openvswitch.h: psample reuses OVS's VXLAN option nest.
constexpr uint16_t kVxlanExtGbp = 1;

using nla::align4;
using nla::Attribute;
using nla::load_host;

uint64_t load_big_endian(const uint8_t* p, size_t width) {
  uint64_t value = 0;
  for (size_t i = 0; i < width; ++i) value = (value << 8) | p[i];
  return value;
}

// Stricter than nla::walk on purpose: deciding that an ambiguous attribute is a nest should
// need every byte of it to be accounted for, or a u32 with a lucky first half would pass.
bool is_exact_nest(const Attribute& attr) {
  if (attr.length < nla::kHeaderLen) return false;
  size_t offset = 0;
  while (offset < attr.length) {
    if (attr.length - offset < nla::kHeaderLen) return false;
    const uint16_t nla_len = load_host<uint16_t>(attr.payload + offset);
    if (nla_len < nla::kHeaderLen || nla_len > attr.length - offset) return false;
    offset += nla_len;
    if (offset == attr.length) return true;
    offset = align4(offset);
  }
  return offset == attr.length;
}

class MessageDecoder {
 public:
  MessageDecoder(const uint8_t* datagram, Message& message) : datagram_(datagram), message_(message) {}

  bool decode_psample_attributes(const uint8_t* p, size_t length) {
    return nla::walk(p, length, [this](const Attribute& attr) { return decode_top_level(attr); });
  }

 private:
  // Kernels 5.8 to 5.11 without the stable fix numbered TUNNEL 7 and GROUP_REFCOUNT 8, while the
  // fixed ones (and every uapi header since) use 7 = GROUP_REFCOUNT, 8 = TUNNEL. Nothing in the
  // message names the layout, so the attribute's shape decides:
  // - 7 whose payload is not exactly 4 bytes and is an exact nest cannot be a u32: it is a tunnel.
  //   A real tunnel nest always holds TTL (8 bytes), so it is never 4 bytes long.
  // - 8 with a 4-byte payload in a group message is the old refcount: group messages carry no
  //   tunnel. In a sample message 8 is always the tunnel, whose nest is decoded as such.
  uint16_t normalise_layout(const Attribute& attr) {
    if (attr.type == kAttrGroupRefcount && attr.length != 4 && is_exact_nest(attr)) {
      message_.swapped_layout = true;
      return kAttrTunnel;
    }
    if (attr.type == kAttrTunnel && message_.kind == MessageKind::kGroup && attr.length == 4) {
      message_.swapped_layout = true;
      return kAttrGroupRefcount;
    }
    return attr.type;
  }

  bool decode_top_level(const Attribute& attr) {
    const uint16_t type = normalise_layout(attr);
    if (type >= kAttrCount) {
      note_unknown();
      return true;
    }
    // The kernel's group filter judges a message by its first SAMPLE_GROUP, nla_parse() would
    // take the last: a message naming two groups has no group to trust.
    if (type == kAttrSampleGroup && (message_.present & (1u << type)) != 0) return false;
    message_.present |= 1u << type;
    switch (static_cast<PsampleAttr>(type)) {
      case kAttrIifindex:
        return read_host(attr, message_.iifindex);
      case kAttrOifindex:
        return read_host(attr, message_.oifindex);
      case kAttrOrigsize:
        return read_host(attr, message_.origsize);
      case kAttrSampleGroup:
        return read_host(attr, message_.group);
      case kAttrGroupSeq:
        return read_host(attr, message_.group_seq);
      case kAttrSampleRate:
        return read_host(attr, message_.rate);
      case kAttrData:
        message_.data = range_of(attr);
        return true;
      case kAttrGroupRefcount:
        return read_host(attr, message_.group_refcount);
      case kAttrTunnel:
        return decode_tunnel(attr);
      case kAttrPad:
        return true;
      case kAttrOutTc:
        return read_host(attr, message_.out_tc);
      case kAttrOutTcOcc:
        return read_host(attr, message_.out_tc_occ);
      case kAttrLatency:
        return read_host(attr, message_.latency);
      case kAttrTimestamp:
        return read_host(attr, message_.timestamp);
      case kAttrProto:
        return read_host(attr, message_.proto);
      case kAttrUserCookie:
        message_.user_cookie = range_of(attr);
        return true;
      case kAttrSampleProbability:
        message_.probability = true;
        return true;
      case kAttrCount:
        break;
    }
    return false;
  }

  bool decode_tunnel(const Attribute& nest) {
    Tunnel& tunnel = message_.tunnel;
    tunnel = Tunnel{};
    return nla::walk(nest.payload, nest.length, [this, &tunnel](const Attribute& attr) {
      if (attr.type >= kTunCount) {
        note_unknown();
        return true;
      }
      tunnel.present |= 1u << attr.type;
      switch (static_cast<TunnelAttr>(attr.type)) {
        case kTunId:
          return read_big_endian(attr, tunnel.id);
        case kTunIpv4Src:
          return read_bytes(attr, tunnel.ipv4_src);
        case kTunIpv4Dst:
          return read_bytes(attr, tunnel.ipv4_dst);
        case kTunTos:
          return read_host(attr, tunnel.tos);
        case kTunTtl:
          return read_host(attr, tunnel.ttl);
        case kTunDontFragment:
        case kTunCsum:
        case kTunOam:
        case kTunIpv4InfoBridge:
        case kTunPad:
          return true;
        case kTunGeneveOpts:
          tunnel.geneve_opts = range_of(attr);
          return true;
        case kTunTpSrc:
          return read_big_endian(attr, tunnel.tp_src);
        case kTunTpDst:
          return read_big_endian(attr, tunnel.tp_dst);
        case kTunVxlanOpts:
          return decode_vxlan_options(attr, tunnel);
        case kTunIpv6Src:
          return read_bytes(attr, tunnel.ipv6_src);
        case kTunIpv6Dst:
          return read_bytes(attr, tunnel.ipv6_dst);
        case kTunErspanOpts:
          tunnel.erspan_opts = range_of(attr);
          return true;
        case kTunCount:
          break;
      }
      return false;
    });
  }

  bool decode_vxlan_options(const Attribute& nest, Tunnel& tunnel) {
    return nla::walk(nest.payload, nest.length, [this, &tunnel](const Attribute& attr) {
      if (attr.type == kVxlanExtGbp) return read_host(attr, tunnel.vxlan_gbp);
      note_unknown();
      return true;
    });
  }

  // A payload longer than its type is accepted (the kernel's policy is lenient); shorter is not.
  template <typename T>
  static bool read_host(const Attribute& attr, T& out) {
    if (attr.length < sizeof(T)) return false;
    out = load_host<T>(attr.payload);
    return true;
  }

  template <typename T>
  static bool read_big_endian(const Attribute& attr, T& out) {
    if (attr.length < sizeof(T)) return false;
    out = static_cast<T>(load_big_endian(attr.payload, sizeof(T)));
    return true;
  }

  template <size_t N>
  static bool read_bytes(const Attribute& attr, uint8_t (&out)[N]) {
    if (attr.length < N) return false;
    std::memcpy(out, attr.payload, N);
    return true;
  }

  ByteRange range_of(const Attribute& attr) const {
    // parse_datagram only admits messages that end below 4 GiB, so both fit in 32 bits.
    return ByteRange{static_cast<uint32_t>(attr.payload - datagram_), static_cast<uint32_t>(attr.length)};
  }

  void note_unknown() {
    if (message_.unknown_attrs < std::numeric_limits<uint16_t>::max()) ++message_.unknown_attrs;
  }

  const uint8_t* datagram_;
  Message& message_;
};

enum class Verdict : uint8_t { kAppend, kSkip, kForeign, kMalformed };

Verdict decode_control(uint16_t type, const uint8_t* payload, size_t length, Message& message) {
  switch (type) {
    case kNlmsgNoop:
      return Verdict::kSkip;
    case kNlmsgError:
      if (length < kNlmsgerrLen) return Verdict::kMalformed;
      message.kind = MessageKind::kError;
      message.error = load_host<int32_t>(payload);
      return Verdict::kAppend;
    case kNlmsgDone:
      message.kind = MessageKind::kDone;
      // A dump that failed part-way reports its errno in DONE's optional int.
      if (length >= sizeof(int32_t)) message.error = load_host<int32_t>(payload);
      return Verdict::kAppend;
    case kNlmsgOverrun:
      message.kind = MessageKind::kOverrun;
      return Verdict::kAppend;
    default:
      return Verdict::kForeign;  // reserved control types belong to no family
  }
}

Verdict decode_generic(const uint8_t* datagram, const uint8_t* payload, size_t length, Message& message) {
  if (length < kGenlHeaderLen) return Verdict::kMalformed;
  message.cmd = payload[0];
  message.version = payload[1];
  switch (message.cmd) {
    case kCmdSample:
      message.kind = MessageKind::kSample;
      break;
    case kCmdGetGroup:
    case kCmdNewGroup:
    case kCmdDelGroup:
      message.kind = MessageKind::kGroup;
      break;
    default:
      return Verdict::kMalformed;  // a command this parser cannot interpret is reported, not guessed
  }
  MessageDecoder decoder(datagram, message);
  if (!decoder.decode_psample_attributes(payload + kGenlHeaderLen, length - kGenlHeaderLen)) {
    return Verdict::kMalformed;
  }
  // psample_nl_send() and psample_group_nl_fill() always put the group: without one, neither a
  // sample nor a group event can be judged by the group filter or matched to a collector set.
  if ((message.present & (1u << kAttrSampleGroup)) == 0) return Verdict::kMalformed;
  return Verdict::kAppend;
}

Verdict decode_message(const uint8_t* datagram, const uint8_t* p, size_t length, uint16_t family_id, Message& message) {
  message.nlmsg_type = load_host<uint16_t>(p + 4);
  message.nlmsg_flags = load_host<uint16_t>(p + 6);
  message.nlmsg_seq = load_host<uint32_t>(p + 8);
  message.nlmsg_pid = load_host<uint32_t>(p + 12);
  const uint8_t* payload = p + kNlmsgHeaderLen;
  const size_t payload_length = length - kNlmsgHeaderLen;
  if (message.nlmsg_type < kNlmsgMinType) return decode_control(message.nlmsg_type, payload, payload_length, message);
  if (message.nlmsg_type == kGenlIdCtrl) {
    message.kind = MessageKind::kController;
    return Verdict::kAppend;
  }
  if (family_id != 0 && message.nlmsg_type != family_id) return Verdict::kForeign;
  return decode_generic(datagram, payload, payload_length, message);
}

}  // namespace

size_t parse_datagram(const uint8_t* buf, size_t len, uint16_t family_id, std::vector<Message>& out, Stats& stats) {
  size_t appended = 0;
  size_t offset = 0;
  while (offset < len) {
    const size_t remaining = len - offset;
    if (remaining < kNlmsgHeaderLen) {
      ++stats[kMalformed];
      break;
    }
    const uint32_t nlmsg_len = load_host<uint32_t>(buf + offset);
    const bool fits_ranges = offset + nlmsg_len <= std::numeric_limits<uint32_t>::max();
    if (nlmsg_len < kNlmsgHeaderLen || nlmsg_len > remaining || !fits_ranges) {
      ++stats[kMalformed];
      break;
    }
    Message message;
    message.whole = ByteRange{static_cast<uint32_t>(offset), nlmsg_len};
    switch (decode_message(buf, buf + offset, nlmsg_len, family_id, message)) {
      case Verdict::kAppend:
        out.push_back(message);
        ++appended;
        if (message.swapped_layout) ++stats[kSwappedLayout];
        stats[kUnknownAttributes] += message.unknown_attrs;
        break;
      case Verdict::kSkip:
        break;
      case Verdict::kForeign:
        ++stats[kForeign];
        break;
      case Verdict::kMalformed:
        ++stats[kMalformed];
        break;
    }
    const size_t step = align4(nlmsg_len);
    if (step >= remaining) break;
    offset += step;
  }
  return appended;
}

}  // namespace ovnpsample
