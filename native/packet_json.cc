#include "packet_json.h"

#include <algorithm>
#include <charconv>

namespace ovnpsample {

namespace {

constexpr uint32_t kEtherTypeIpv4 = 0x0800;
constexpr uint32_t kEtherTypeArp = 0x0806;
constexpr uint32_t kEtherTypeIpv6 = 0x86dd;

constexpr uint8_t kProtoHopByHop = 0;
constexpr uint8_t kProtoIcmp = 1;
constexpr uint8_t kProtoTcp = 6;
constexpr uint8_t kProtoUdp = 17;
constexpr uint8_t kProtoRouting = 43;
constexpr uint8_t kProtoFragment = 44;
constexpr uint8_t kProtoAuthentication = 51;
constexpr uint8_t kProtoIcmpv6 = 58;
constexpr uint8_t kProtoNone = 59;
constexpr uint8_t kProtoDestinationOptions = 60;
constexpr uint8_t kProtoSctp = 132;

constexpr size_t kEthernetHeaderBytes = 14;
constexpr size_t kVlanTagBytes = 4;
constexpr size_t kArpFixedBytes = 8;
constexpr size_t kArpEthernetIpv4Bytes = 28;
constexpr size_t kIpv4MinHeaderBytes = 20;
constexpr size_t kIpv6HeaderBytes = 40;
constexpr size_t kIpv6ExtensionMinBytes = 8;
constexpr size_t kTcpMinHeaderBytes = 20;
constexpr size_t kUdpHeaderBytes = 8;
constexpr size_t kSctpCommonHeaderBytes = 12;
constexpr size_t kIcmpHeaderBytes = 8;
// ICMPv6 neighbor solicitation / advertisement and redirect: the target address after the header.
constexpr size_t kIcmpv6TargetMessageBytes = 24;
constexpr size_t kPortBytes = 4;

// Where a header's packet length is not stated (Ethernet, ARP, a GSO packet): only the data bounds it.
constexpr size_t kUnstatedEnd = SIZE_MAX;

bool is_vlan_tpid(uint32_t ether_type) {
  // 0x9100: the pre-standard QinQ outer tag some switches still emit.
  return ether_type == 0x8100 || ether_type == 0x88a8 || ether_type == 0x9100;
}

bool is_ipv6_extension(uint8_t protocol) {
  return protocol == kProtoHopByHop || protocol == kProtoRouting || protocol == kProtoFragment ||
         protocol == kProtoDestinationOptions || protocol == kProtoAuthentication;
}

const char* ipv6_extension_name(uint8_t protocol) {
  switch (protocol) {
    case kProtoHopByHop: return "hop-by-hop";
    case kProtoRouting: return "routing";
    case kProtoFragment: return "fragment";
    case kProtoDestinationOptions: return "destination-options";
    default: return "authentication";
  }
}

// From the header's length byte: AH counts 4-byte words minus 2 (RFC 4302), the rest 8-byte words minus 1.
size_t ipv6_extension_bytes(uint8_t protocol, uint8_t length_field) {
  if (protocol == kProtoFragment) return 8;
  if (protocol == kProtoAuthentication) return (size_t{length_field} + 2) * 4;
  return (size_t{length_field} + 1) * 8;
}

const char* icmp_type_name(uint8_t type) {
  static constexpr const char* kNames[] = {
      "echo-reply", nullptr, nullptr, "destination-unreachable", "source-quench", "redirect", nullptr, nullptr,
      "echo-request", "router-advertisement", "router-solicitation", "time-exceeded", "parameter-problem",
      "timestamp-request", "timestamp-reply"};
  return type < std::size(kNames) ? kNames[type] : nullptr;
}

const char* icmpv6_type_name(uint8_t type) {
  switch (type) {
    case 1: return "destination-unreachable";
    case 2: return "packet-too-big";
    case 3: return "time-exceeded";
    case 4: return "parameter-problem";
    case 128: return "echo-request";
    case 129: return "echo-reply";
    case 130: return "multicast-listener-query";
    case 131: return "multicast-listener-report";
    case 132: return "multicast-listener-done";
    case 133: return "router-solicitation";
    case 134: return "router-advertisement";
    case 135: return "neighbor-solicitation";
    case 136: return "neighbor-advertisement";
    case 137: return "redirect";
    case 143: return "multicast-listener-report-v2";
    default: return nullptr;
  }
}

// The header (or 'payload': the bytes after the last header) a problem was found in.
enum class Layer : uint8_t { kEthernet, kVlan, kArp, kIpv4, kIpv6, kIpv6Extension, kTcp, kUdp, kSctp, kIcmp, kIcmpv6, kPayload };

const char* layer_name(Layer layer) {
  static constexpr const char* kNames[] = {"ethernet", "vlan", "arp",  "ipv4", "ipv6",   "ipv6-extension",
                                           "tcp",      "udp",  "sctp", "icmp", "icmpv6", "payload"};
  return kNames[static_cast<uint8_t>(layer)];
}

// DecodedPacket's members after the four every packet has, in the order decoding may set them.
enum class Member : uint8_t { kEthernet, kNetwork, kTransport, kUnknown, kTruncatedLayer, kMalformed };
constexpr size_t kMemberCount = 6;

enum class Network : uint8_t { kNone, kArp, kIpv4, kIpv6 };
enum class Transport : uint8_t { kNone, kTcp, kUdp, kSctp, kIcmp, kIcmpv6, kPorts };
enum class Reason : uint8_t { kIpv4Version, kIpv6Version, kIpv4HeaderLength, kTcpDataOffset, kEnclosingLength };

// What an IP header hands to the transport layer.
struct IpPayload {
  bool present = false;
  uint8_t protocol = 0;
  size_t start = 0;
  // Where the IP header says the packet ends (the data may stop earlier, or carry padding).
  size_t declared_end = kUnstatedEnd;
  // False for non-first fragments: their payload continues a transport header sent earlier.
  bool has_transport_header = false;
};

template <size_t N>
void add(std::string& out, const char (&text)[N]) {
  out.append(text, N - 1);
}

void add_string(std::string& out, const char* text) { out.append(text); }

template <typename Integer>
void add_number(std::string& out, Integer value) {
  char digits[24];
  const auto result = std::to_chars(digits, digits + sizeof digits, value);
  out.append(digits, static_cast<size_t>(result.ptr - digits));
}

void add_bool(std::string& out, bool value) {
  if (value) add(out, "true");
  else add(out, "false");
}

constexpr char kHexDigits[] = "0123456789abcdef";

uint32_t u16_at(const uint8_t* data, size_t offset) { return uint32_t{data[offset]} << 8 | data[offset + 1]; }

uint32_t u32_at(const uint8_t* data, size_t offset) { return u16_at(data, offset) << 16 | u16_at(data, offset + 2); }

// The address forms of src/packet/address.ts (which psample's tunnel metadata still uses).
void add_mac(std::string& out, const uint8_t* data, size_t offset) {
  out += '"';
  for (size_t i = 0; i < 6; i++) {
    if (i != 0) out += ':';
    out += kHexDigits[data[offset + i] >> 4];
    out += kHexDigits[data[offset + i] & 0xf];
  }
  out += '"';
}

void add_ipv4_text(std::string& out, const uint8_t* data, size_t offset) {
  for (size_t i = 0; i < 4; i++) {
    if (i != 0) out += '.';
    add_number(out, data[offset + i]);
  }
}

void add_ipv4(std::string& out, const uint8_t* data, size_t offset) {
  out += '"';
  add_ipv4_text(out, data, offset);
  out += '"';
}

// RFC 5952: lowercase, no leading zeros, the longest (first on a tie) run of 2+ zero groups as "::".
void add_ipv6(std::string& out, const uint8_t* data, size_t offset) {
  uint32_t groups[8];
  for (size_t i = 0; i < 8; i++) groups[i] = u16_at(data, offset + 2 * i);
  int best_start = -1;
  int best_length = 1;
  int run_start = -1;
  for (int group = 0; group < 8; group++) {
    if (groups[group] != 0) {
      run_start = -1;
      continue;
    }
    if (run_start < 0) run_start = group;
    if (group - run_start + 1 > best_length) {
      best_start = run_start;
      best_length = group - run_start + 1;
    }
  }
  out += '"';
  // RFC 5952 section 5: IPv4-mapped addresses keep the dotted quad operators recognise.
  if (best_start == 0 && best_length == 5 && groups[5] == 0xffff) {
    add(out, "::ffff:");
    add_ipv4_text(out, data, offset + 12);
    out += '"';
    return;
  }
  bool separate = false;
  for (int group = 0; group < 8; group++) {
    if (group == best_start) {
      add(out, "::");
      separate = false;
      group += best_length - 1;
      continue;
    }
    if (separate) out += ':';
    char digits[4];
    const auto result = std::to_chars(digits, digits + sizeof digits, groups[group], 16);
    out.append(digits, static_cast<size_t>(result.ptr - digits));
    separate = true;
  }
  out += '"';
}

class PacketDecoder {
 public:
  PacketDecoder(const uint8_t* data, size_t length, uint16_t proto) : data_(data), length_(length), ether_type_(proto) {}

  void decode();
  void write(std::string& out) const;

 private:
  bool detect_raw_link() const;
  bool ethernet_outweighs_raw(int version) const;
  bool decode_ethernet(size_t& offset);
  void decode_arp(size_t offset);
  IpPayload decode_ipv4(size_t offset);
  IpPayload decode_ipv6(size_t offset);
  void decode_transport(const IpPayload& payload);
  void decode_tcp(size_t offset, size_t declared_end);
  void decode_ports_only(size_t offset, size_t declared_end, Layer protocol);
  void decode_icmp(size_t offset, size_t declared_end, bool v6);

  int64_t room_left(size_t offset, size_t declared_end) const {
    return static_cast<int64_t>(std::min(length_, declared_end)) - static_cast<int64_t>(offset);
  }
  bool has_room(size_t offset, size_t needed, size_t declared_end, Layer layer);
  void set(Member member) { members_[member_count_++] = member; }
  void mark_truncated(Layer layer);
  void mark_malformed(Layer layer, Reason reason, uint32_t value, int64_t left = 0);

  void write_ethernet(std::string& out) const;
  void write_network(std::string& out) const;
  void write_ipv6(std::string& out) const;
  void write_transport(std::string& out) const;
  void write_reason(std::string& out) const;

  const uint8_t* data_;
  size_t length_;
  uint32_t ether_type_;
  bool raw_link_ = false;
  Member members_[kMemberCount] = {};
  size_t member_count_ = 0;

  size_t vlan_count_ = 0;
  Network network_ = Network::kNone;
  size_t network_offset_ = 0;
  bool arp_addresses_ = false;
  uint8_t ipv6_protocol_ = 0;
  size_t ipv6_extension_count_ = 0;
  bool has_ipv6_fragment_ = false;
  size_t ipv6_fragment_offset_ = 0;

  Transport transport_ = Transport::kNone;
  size_t transport_offset_ = 0;
  Layer ports_protocol_ = Layer::kTcp;
  bool icmp_echo_ = false;
  bool icmpv6_target_ = false;

  bool unknown_ip_protocol_ = false;
  uint32_t unknown_value_ = 0;

  bool truncated_ = false;
  Layer truncated_layer_ = Layer::kEthernet;
  bool malformed_ = false;
  Layer malformed_layer_ = Layer::kEthernet;
  Reason reason_ = Reason::kEnclosingLength;
  uint32_t reason_value_ = 0;
  int64_t reason_left_ = 0;
};

// Keeps the first layer the data ran out in: later layers were never reached.
void PacketDecoder::mark_truncated(Layer layer) {
  if (truncated_) return;
  truncated_ = true;
  truncated_layer_ = layer;
  set(Member::kTruncatedLayer);
}

void PacketDecoder::mark_malformed(Layer layer, Reason reason, uint32_t value, int64_t left) {
  if (malformed_) return;
  malformed_ = true;
  malformed_layer_ = layer;
  reason_ = reason;
  reason_value_ = value;
  reason_left_ = left;
  set(Member::kMalformed);
}

// True when `needed` bytes from `offset` are there. Otherwise records why: the data ran out (a
// sampler truncated the packet) or the enclosing header's length ends inside this header.
bool PacketDecoder::has_room(size_t offset, size_t needed, size_t declared_end, Layer layer) {
  const size_t wanted = offset + needed;
  if (wanted <= length_ && wanted <= declared_end) return true;
  if (declared_end < wanted && declared_end <= length_) {
    mark_malformed(layer, Reason::kEnclosingLength, static_cast<uint32_t>(needed),
                   static_cast<int64_t>(declared_end) - static_cast<int64_t>(offset));
  } else {
    mark_truncated(layer);
  }
  return false;
}

// Both readings fit: a raw packet whose source address happens to spell the ethertype or a VLAN
// TPID at bytes 12-13. A real Ethernet frame of this proto reaches the proto after its tags and
// then the matching IP version nibble; when the data ends before that, the common case wins.
bool PacketDecoder::ethernet_outweighs_raw(int version) const {
  size_t offset = 12;
  while (offset + 2 <= length_ && is_vlan_tpid(u16_at(data_, offset))) offset += kVlanTagBytes;
  if (offset + 2 > length_) return true;
  if (u16_at(data_, offset) != ether_type_) return false;
  return offset + 2 >= length_ || data_[offset + 2] >> 4 == version;
}

// psample DATA starts at the MAC header on Ethernet devices and at the IP header on devices
// without one (tun, wireguard, ipip). PROTO is the skb's ethertype, so an Ethernet header shows
// it (or a VLAN TPID) at bytes 12-13, and a raw IP packet shows the matching version nibble.
bool PacketDecoder::detect_raw_link() const {
  const int version = ether_type_ == kEtherTypeIpv4 ? 4 : ether_type_ == kEtherTypeIpv6 ? 6 : -1;
  const bool looks_raw = version > 0 && length_ > 0 && data_[0] >> 4 == version;
  if (length_ < kEthernetHeaderBytes) return looks_raw;
  const uint32_t at_12 = u16_at(data_, 12);
  const bool looks_ethernet = at_12 == ether_type_ || is_vlan_tpid(at_12);
  if (!looks_raw) return false;
  if (!looks_ethernet) return true;
  return !ethernet_outweighs_raw(version);
}

// Sets the network layer's ether type; false when the network layer is not there.
bool PacketDecoder::decode_ethernet(size_t& offset) {
  if (!has_room(0, kEthernetHeaderBytes, kUnstatedEnd, Layer::kEthernet)) return false;
  set(Member::kEthernet);
  uint32_t ether_type = u16_at(data_, 12);
  offset = kEthernetHeaderBytes;
  while (is_vlan_tpid(ether_type)) {
    if (!has_room(offset, kVlanTagBytes, kUnstatedEnd, Layer::kVlan)) return false;
    vlan_count_++;
    ether_type = u16_at(data_, offset + 2);
    offset += kVlanTagBytes;
  }
  ether_type_ = ether_type;
  return true;
}

void PacketDecoder::decode_arp(size_t offset) {
  if (!has_room(offset, kArpFixedBytes, kUnstatedEnd, Layer::kArp)) return;
  network_ = Network::kArp;
  network_offset_ = offset;
  set(Member::kNetwork);
  // Addresses are decoded only for Ethernet / IPv4 ARP, the only kind an OVN network carries.
  const bool ethernet_ipv4 = u16_at(data_, offset) == 1 && u16_at(data_, offset + 2) == kEtherTypeIpv4 &&
                             data_[offset + 4] == 6 && data_[offset + 5] == 4;
  arp_addresses_ = ethernet_ipv4 && has_room(offset, kArpEthernetIpv4Bytes, kUnstatedEnd, Layer::kArp);
}

IpPayload PacketDecoder::decode_ipv4(size_t offset) {
  if (!has_room(offset, kIpv4MinHeaderBytes, kUnstatedEnd, Layer::kIpv4)) return {};
  network_ = Network::kIpv4;
  network_offset_ = offset;
  set(Member::kNetwork);
  const uint8_t version = data_[offset] >> 4;
  if (version != 4) {
    mark_malformed(Layer::kIpv4, Reason::kIpv4Version, version);
    return {};
  }
  const size_t header_bytes = size_t{data_[offset] & 0x0fu} * 4;
  if (header_bytes < kIpv4MinHeaderBytes) {
    mark_malformed(Layer::kIpv4, Reason::kIpv4HeaderLength, static_cast<uint32_t>(header_bytes));
    return {};
  }
  // GSO packets sampled before segmentation (BIG TCP) carry total length 0: only the data bounds them.
  const uint32_t total_length = u16_at(data_, offset + 2);
  const size_t declared_end = total_length == 0 ? kUnstatedEnd : offset + total_length;
  if (!has_room(offset, header_bytes, declared_end, Layer::kIpv4)) return {};
  return {true, data_[offset + 9], offset + header_bytes, declared_end, (u16_at(data_, offset + 6) & 0x1fff) == 0};
}

IpPayload PacketDecoder::decode_ipv6(size_t offset) {
  if (!has_room(offset, kIpv6HeaderBytes, kUnstatedEnd, Layer::kIpv6)) return {};
  network_ = Network::kIpv6;
  network_offset_ = offset;
  set(Member::kNetwork);
  ipv6_protocol_ = data_[offset + 6];
  const uint8_t version = data_[offset] >> 4;
  if (version != 6) {
    mark_malformed(Layer::kIpv6, Reason::kIpv6Version, version);
    return {};
  }
  // Payload length 0 means a jumbogram or a BIG TCP GSO packet: only the data bounds them.
  const uint32_t payload_length = u16_at(data_, offset + 4);
  const size_t declared_end = payload_length == 0 ? kUnstatedEnd : offset + kIpv6HeaderBytes + payload_length;
  size_t cursor = offset + kIpv6HeaderBytes;
  bool extension = is_ipv6_extension(ipv6_protocol_);
  while (extension) {
    if (!has_room(cursor, kIpv6ExtensionMinBytes, declared_end, Layer::kIpv6Extension)) return {};
    const size_t length = ipv6_extension_bytes(ipv6_protocol_, data_[cursor + 1]);
    if (!has_room(cursor, length, declared_end, Layer::kIpv6Extension)) return {};
    ipv6_extension_count_++;
    if (ipv6_protocol_ == kProtoFragment) {
      has_ipv6_fragment_ = true;
      ipv6_fragment_offset_ = cursor;
    }
    ipv6_protocol_ = data_[cursor];
    cursor += length;
    // Past a non-first fragment header comes the middle of the payload, not another header.
    const bool later_fragment = has_ipv6_fragment_ && (u16_at(data_, ipv6_fragment_offset_ + 2) & 0xfff8) != 0;
    extension = !later_fragment && is_ipv6_extension(ipv6_protocol_);
  }
  const bool first_fragment = !has_ipv6_fragment_ || (u16_at(data_, ipv6_fragment_offset_ + 2) & 0xfff8) == 0;
  return {true, ipv6_protocol_, cursor, declared_end, first_fragment};
}

void PacketDecoder::decode_transport(const IpPayload& payload) {
  const size_t start = payload.start;
  const size_t declared_end = payload.declared_end;
  switch (payload.protocol) {
    case kProtoTcp:
      decode_tcp(start, declared_end);
      return;
    case kProtoUdp:
      if (!has_room(start, kUdpHeaderBytes, declared_end, Layer::kUdp)) return decode_ports_only(start, declared_end, Layer::kUdp);
      transport_ = Transport::kUdp;
      break;
    case kProtoSctp:
      if (!has_room(start, kSctpCommonHeaderBytes, declared_end, Layer::kSctp)) return decode_ports_only(start, declared_end, Layer::kSctp);
      transport_ = Transport::kSctp;
      break;
    case kProtoIcmp:
      return decode_icmp(start, declared_end, false);
    case kProtoIcmpv6:
      return decode_icmp(start, declared_end, true);
    case kProtoNone:
      return;
    default:
      unknown_ip_protocol_ = true;
      unknown_value_ = payload.protocol;
      set(Member::kUnknown);
      return;
  }
  transport_offset_ = start;
  set(Member::kTransport);
}

void PacketDecoder::decode_tcp(size_t offset, size_t declared_end) {
  if (!has_room(offset, kTcpMinHeaderBytes, declared_end, Layer::kTcp)) return decode_ports_only(offset, declared_end, Layer::kTcp);
  transport_ = Transport::kTcp;
  transport_offset_ = offset;
  set(Member::kTransport);
  const size_t header_bytes = static_cast<size_t>(data_[offset + 12] >> 4) * 4;
  if (header_bytes < kTcpMinHeaderBytes) {
    mark_malformed(Layer::kTcp, Reason::kTcpDataOffset, static_cast<uint32_t>(header_bytes));
    return;
  }
  has_room(offset, header_bytes, declared_end, Layer::kTcp);
}

// After a cut TCP/UDP/SCTP header: keeps the ports when the first 4 bytes made it.
void PacketDecoder::decode_ports_only(size_t offset, size_t declared_end, Layer protocol) {
  if (room_left(offset, declared_end) < static_cast<int64_t>(kPortBytes)) return;
  transport_ = Transport::kPorts;
  transport_offset_ = offset;
  ports_protocol_ = protocol;
  set(Member::kTransport);
}

void PacketDecoder::decode_icmp(size_t offset, size_t declared_end, bool v6) {
  const bool complete = has_room(offset, kIcmpHeaderBytes, declared_end, v6 ? Layer::kIcmpv6 : Layer::kIcmp);
  if (!complete && room_left(offset, declared_end) < 2) return;
  const uint8_t type = data_[offset];
  transport_ = v6 ? Transport::kIcmpv6 : Transport::kIcmp;
  transport_offset_ = offset;
  set(Member::kTransport);
  if (!complete) return;
  icmp_echo_ = v6 ? type == 128 || type == 129 : type == 8 || type == 0;
  // Neighbor solicitation / advertisement and redirect carry the address asked or told about.
  if (v6 && (type == 135 || type == 136 || type == 137)) {
    icmpv6_target_ = has_room(offset, kIcmpv6TargetMessageBytes, declared_end, Layer::kIcmpv6);
  }
}

void PacketDecoder::decode() {
  raw_link_ = detect_raw_link();
  size_t offset = 0;
  if (!raw_link_ && !decode_ethernet(offset)) return;
  IpPayload payload;
  switch (ether_type_) {
    case kEtherTypeArp:
      decode_arp(offset);
      return;
    case kEtherTypeIpv4:
      payload = decode_ipv4(offset);
      break;
    case kEtherTypeIpv6:
      payload = decode_ipv6(offset);
      break;
    default:
      unknown_value_ = ether_type_;
      set(Member::kUnknown);
      return;
  }
  if (!payload.present) return;
  if (payload.has_transport_header) decode_transport(payload);
  if (payload.declared_end != kUnstatedEnd && payload.declared_end > length_) mark_truncated(Layer::kPayload);
}

void PacketDecoder::write_ethernet(std::string& out) const {
  add(out, "{\"dst\":");
  add_mac(out, data_, 0);
  add(out, ",\"src\":");
  add_mac(out, data_, 6);
  add(out, ",\"vlans\":[");
  // Tag i: its TPID where the ether type would be, its TCI after it.
  for (size_t i = 0; i < vlan_count_; i++) {
    const uint32_t tci = u16_at(data_, 14 + 4 * i);
    add_string(out, i == 0 ? "{\"tpid\":" : ",{\"tpid\":");
    add_number(out, u16_at(data_, 12 + 4 * i));
    add(out, ",\"pcp\":");
    add_number(out, tci >> 13);
    add(out, ",\"dei\":");
    add_bool(out, (tci & 0x1000) != 0);
    add(out, ",\"vid\":");
    add_number(out, tci & 0x0fff);
    out += '}';
  }
  add(out, "]}");
}

void PacketDecoder::write_ipv6(std::string& out) const {
  const size_t at = network_offset_;
  const uint32_t first = u32_at(data_, at);
  const uint32_t traffic_class = (first >> 20) & 0xff;
  add(out, "{\"kind\":\"ipv6\",\"version\":6,\"dscp\":");
  add_number(out, traffic_class >> 2);
  add(out, ",\"ecn\":");
  add_number(out, traffic_class & 3);
  add(out, ",\"flowLabel\":");
  add_number(out, first & 0xfffff);
  add(out, ",\"payloadLength\":");
  add_number(out, u16_at(data_, at + 4));
  add(out, ",\"nextHeader\":");
  add_number(out, data_[at + 6]);
  add(out, ",\"hopLimit\":");
  add_number(out, data_[at + 7]);
  add(out, ",\"src\":");
  add_ipv6(out, data_, at + 8);
  add(out, ",\"dst\":");
  add_ipv6(out, data_, at + 24);
  add(out, ",\"extensions\":[");
  // The chain again, as far as decode_ipv6() walked it: each header announced by the one before.
  uint8_t protocol = data_[at + 6];
  size_t cursor = at + kIpv6HeaderBytes;
  for (size_t i = 0; i < ipv6_extension_count_; i++) {
    const size_t length = ipv6_extension_bytes(protocol, data_[cursor + 1]);
    add_string(out, i == 0 ? "{\"protocol\":" : ",{\"protocol\":");
    add_number(out, protocol);
    add(out, ",\"name\":\"");
    add_string(out, ipv6_extension_name(protocol));
    add(out, "\",\"length\":");
    add_number(out, length);
    out += '}';
    protocol = data_[cursor];
    cursor += length;
  }
  add(out, "],\"protocol\":");
  add_number(out, ipv6_protocol_);
  if (has_ipv6_fragment_) {
    const uint32_t offset_flags = u16_at(data_, ipv6_fragment_offset_ + 2);
    add(out, ",\"fragment\":{\"offset\":");
    add_number(out, offset_flags & 0xfff8);
    add(out, ",\"moreFragments\":");
    add_bool(out, (offset_flags & 1) != 0);
    add(out, ",\"id\":");
    add_number(out, u32_at(data_, ipv6_fragment_offset_ + 4));
    out += '}';
  }
  out += '}';
}

void PacketDecoder::write_network(std::string& out) const {
  const size_t at = network_offset_;
  switch (network_) {
    case Network::kArp:
      add(out, "{\"kind\":\"arp\",\"hardwareType\":");
      add_number(out, u16_at(data_, at));
      add(out, ",\"protocolType\":");
      add_number(out, u16_at(data_, at + 2));
      add(out, ",\"op\":");
      add_number(out, u16_at(data_, at + 6));
      if (arp_addresses_) {
        add(out, ",\"senderMac\":");
        add_mac(out, data_, at + 8);
        add(out, ",\"senderIp\":");
        add_ipv4(out, data_, at + 14);
        add(out, ",\"targetMac\":");
        add_mac(out, data_, at + 18);
        add(out, ",\"targetIp\":");
        add_ipv4(out, data_, at + 24);
      }
      out += '}';
      return;
    case Network::kIpv4: {
      const uint32_t tos = data_[at + 1];
      const uint32_t flags_fragment = u16_at(data_, at + 6);
      add(out, "{\"kind\":\"ipv4\",\"version\":4,\"ihl\":");
      add_number(out, data_[at] & 0x0f);
      add(out, ",\"dscp\":");
      add_number(out, tos >> 2);
      add(out, ",\"ecn\":");
      add_number(out, tos & 3);
      add(out, ",\"totalLength\":");
      add_number(out, u16_at(data_, at + 2));
      add(out, ",\"id\":");
      add_number(out, u16_at(data_, at + 4));
      add(out, ",\"dontFragment\":");
      add_bool(out, (flags_fragment & 0x4000) != 0);
      add(out, ",\"moreFragments\":");
      add_bool(out, (flags_fragment & 0x2000) != 0);
      add(out, ",\"fragmentOffset\":");
      add_number(out, (flags_fragment & 0x1fff) * 8);
      add(out, ",\"ttl\":");
      add_number(out, data_[at + 8]);
      add(out, ",\"protocol\":");
      add_number(out, data_[at + 9]);
      add(out, ",\"src\":");
      add_ipv4(out, data_, at + 12);
      add(out, ",\"dst\":");
      add_ipv4(out, data_, at + 16);
      out += '}';
      return;
    }
    case Network::kIpv6:
      write_ipv6(out);
      return;
    case Network::kNone:
      return;
  }
}

void PacketDecoder::write_transport(std::string& out) const {
  const size_t at = transport_offset_;
  const auto ports = [&](const char* head) {
    add_string(out, head);
    add_number(out, u16_at(data_, at));
    add(out, ",\"dstPort\":");
    add_number(out, u16_at(data_, at + 2));
  };
  switch (transport_) {
    case Transport::kTcp: {
      static constexpr const char* kFlags[] = {"FIN", "SYN", "RST", "PSH", "ACK", "URG", "ECE", "CWR"};
      ports("{\"kind\":\"tcp\",\"srcPort\":");
      add(out, ",\"seq\":");
      add_number(out, u32_at(data_, at + 4));
      add(out, ",\"ack\":");
      add_number(out, u32_at(data_, at + 8));
      add(out, ",\"dataOffset\":");
      add_number(out, data_[at + 12] >> 4);
      add(out, ",\"flags\":[");
      bool first = true;
      for (uint32_t bit = 0; bit < 8; bit++) {
        if ((data_[at + 13] & (1u << bit)) == 0) continue;
        if (!first) out += ',';
        out += '"';
        add_string(out, kFlags[bit]);
        out += '"';
        first = false;
      }
      add(out, "],\"window\":");
      add_number(out, u16_at(data_, at + 14));
      break;
    }
    case Transport::kUdp:
      ports("{\"kind\":\"udp\",\"srcPort\":");
      add(out, ",\"length\":");
      add_number(out, u16_at(data_, at + 4));
      break;
    case Transport::kSctp:
      ports("{\"kind\":\"sctp\",\"srcPort\":");
      add(out, ",\"verificationTag\":");
      add_number(out, u32_at(data_, at + 4));
      break;
    case Transport::kPorts:
      add(out, "{\"kind\":\"ports\",\"protocol\":\"");
      add_string(out, layer_name(ports_protocol_));
      add(out, "\",\"srcPort\":");
      add_number(out, u16_at(data_, at));
      add(out, ",\"dstPort\":");
      add_number(out, u16_at(data_, at + 2));
      break;
    case Transport::kIcmp:
    case Transport::kIcmpv6: {
      const bool v6 = transport_ == Transport::kIcmpv6;
      const uint8_t type = data_[at];
      add_string(out, v6 ? "{\"kind\":\"icmpv6\",\"type\":" : "{\"kind\":\"icmp\",\"type\":");
      add_number(out, type);
      add(out, ",\"code\":");
      add_number(out, data_[at + 1]);
      if (const char* name = v6 ? icmpv6_type_name(type) : icmp_type_name(type)) {
        add(out, ",\"name\":\"");
        add_string(out, name);
        out += '"';
      }
      if (icmp_echo_) {
        add(out, ",\"id\":");
        add_number(out, u16_at(data_, at + 4));
        add(out, ",\"seq\":");
        add_number(out, u16_at(data_, at + 6));
      }
      if (icmpv6_target_) {
        add(out, ",\"target\":");
        add_ipv6(out, data_, at + 8);
      }
      break;
    }
    case Transport::kNone:
      return;
  }
  out += '}';
}

// Fixed ASCII and numbers: nothing in a reason needs escaping in JSON.
void PacketDecoder::write_reason(std::string& out) const {
  out += '"';
  switch (reason_) {
    case Reason::kIpv4Version:
    case Reason::kIpv6Version:
      add(out, "IP version ");
      add_number(out, reason_value_);
      add_string(out, reason_ == Reason::kIpv4Version ? " in a packet marked IPv4" : " in a packet marked IPv6");
      break;
    case Reason::kIpv4HeaderLength:
    case Reason::kTcpDataOffset:
      add_string(out, reason_ == Reason::kIpv4HeaderLength ? "header length " : "data offset ");
      add_number(out, reason_value_);
      add(out, " is below the minimum 20 bytes");
      break;
    case Reason::kEnclosingLength:
      add(out, "the ");
      add_string(out, layer_name(malformed_layer_));
      add(out, " header needs ");
      add_number(out, reason_value_);
      add(out, " bytes but the enclosing length leaves ");
      add_number(out, reason_left_);
      break;
  }
  out += '"';
}

void PacketDecoder::write(std::string& out) const {
  add(out, "{\"link\":\"");
  add_string(out, raw_link_ ? "raw" : "ethernet");
  add(out, "\",\"length\":");
  add_number(out, length_);
  add(out, ",\"etherType\":");
  add_number(out, ether_type_);
  add(out, ",\"truncated\":");
  add_bool(out, truncated_);
  for (size_t i = 0; i < member_count_; i++) {
    switch (members_[i]) {
      case Member::kEthernet:
        add(out, ",\"ethernet\":");
        write_ethernet(out);
        break;
      case Member::kNetwork:
        add(out, ",\"network\":");
        write_network(out);
        break;
      case Member::kTransport:
        add(out, ",\"transport\":");
        write_transport(out);
        break;
      case Member::kUnknown:
        add_string(out, unknown_ip_protocol_ ? ",\"unknown\":{\"kind\":\"ip-protocol\",\"value\":" : ",\"unknown\":{\"kind\":\"ethertype\",\"value\":");
        add_number(out, unknown_value_);
        out += '}';
        break;
      case Member::kTruncatedLayer:
        add(out, ",\"truncatedLayer\":\"");
        add_string(out, layer_name(truncated_layer_));
        out += '"';
        break;
      case Member::kMalformed:
        add(out, ",\"malformed\":{\"layer\":\"");
        add_string(out, layer_name(malformed_layer_));
        add(out, "\",\"reason\":");
        write_reason(out);
        out += '}';
        break;
    }
  }
  out += '}';
}

}  // namespace

void append_packet_json(std::string& out, const uint8_t* data, size_t length, uint16_t proto) {
  PacketDecoder decoder(data, length, proto);
  decoder.decode();
  decoder.write(out);
}

}  // namespace ovnpsample
