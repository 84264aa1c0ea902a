#include "packet/packet_decoder.h"

#include <algorithm>

namespace ovnpsample {

namespace {

constexpr uint32_t kEtherTypeIpv4 = 0x0800;
constexpr uint32_t kEtherTypeArp = 0x0806;
constexpr uint32_t kEtherTypeIpv6 = 0x86dd;

constexpr uint8_t kProtoNone = 59;

constexpr size_t kEthernetHeaderBytes = 14;
constexpr size_t kVlanTagBytes = 4;
constexpr size_t kArpFixedBytes = 8;
constexpr size_t kArpEthernetIpv4Bytes = 28;
constexpr size_t kIpv4MinHeaderBytes = 20;
constexpr size_t kIpv6ExtensionMinBytes = 8;
constexpr size_t kTcpMinHeaderBytes = 20;
constexpr size_t kUdpHeaderBytes = 8;
constexpr size_t kSctpCommonHeaderBytes = 12;
constexpr size_t kIcmpHeaderBytes = 8;
// ICMPv6 neighbor solicitation / advertisement and redirect: the target address after the header.
constexpr size_t kIcmpv6TargetMessageBytes = 24;
constexpr int64_t kPortBytes = 4;
constexpr int64_t kIcmpTypeCodeBytes = 2;

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

class PacketDecoder {
 public:
  PacketDecoder(const uint8_t* data, size_t length, uint16_t proto) {
    p_.data = data;
    p_.length = length;
    p_.ether_type = proto;
  }

  DecodedPacket decode();

 private:
  bool detect_raw_link() const;
  bool ethernet_outweighs_raw(int version) const;
  bool decode_ethernet(size_t& offset);
  void decode_arp(size_t offset);
  IpPayload decode_ipv4(size_t offset);
  IpPayload decode_ipv6(size_t offset);
  void decode_transport(const IpPayload& payload);
  void decode_tcp(size_t offset, size_t declared_end);
  void decode_ports_only(size_t offset, size_t declared_end, PacketLayer protocol);
  void decode_icmp(size_t offset, size_t declared_end, bool v6);

  uint32_t u16(size_t offset) const { return read_u16(p_.data, offset); }
  // Bytes a header starting at `offset` may use: up to where the data or the enclosing packet ends.
  int64_t room_left(size_t offset, size_t declared_end) const {
    return static_cast<int64_t>(std::min(p_.length, declared_end)) - static_cast<int64_t>(offset);
  }
  bool has_room(size_t offset, size_t needed, size_t declared_end, PacketLayer layer);
  void set(PacketMember member) { p_.members[p_.member_count++] = member; }
  void set_network(NetworkKind kind, size_t offset);
  void set_transport(TransportKind kind, size_t offset);
  void set_ports(TransportKind kind, size_t offset);
  void mark_truncated(PacketLayer layer);
  void mark_malformed(PacketLayer layer, MalformedReason reason, uint32_t value, int64_t left = 0);

  DecodedPacket p_;
};

// Keeps the first layer the data ran out in: later layers were never reached.
void PacketDecoder::mark_truncated(PacketLayer layer) {
  if (p_.truncated) return;
  p_.truncated = true;
  p_.truncated_layer = layer;
  set(PacketMember::kTruncatedLayer);
}

// Keeps the first contradiction: decoding stops at its layer.
void PacketDecoder::mark_malformed(PacketLayer layer, MalformedReason reason, uint32_t value, int64_t left) {
  if (p_.malformed) return;
  p_.malformed = true;
  p_.malformed_layer = layer;
  p_.reason = reason;
  p_.reason_value = value;
  p_.reason_left = left;
  set(PacketMember::kMalformed);
}

void PacketDecoder::set_network(NetworkKind kind, size_t offset) {
  p_.network = kind;
  p_.network_offset = offset;
  set(PacketMember::kNetwork);
}

void PacketDecoder::set_transport(TransportKind kind, size_t offset) {
  p_.transport = kind;
  p_.transport_offset = offset;
  set(PacketMember::kTransport);
}

// TCP, UDP, SCTP and a header cut after its ports all start with the two ports.
void PacketDecoder::set_ports(TransportKind kind, size_t offset) {
  set_transport(kind, offset);
  p_.src_port = u16(offset);
  p_.dst_port = u16(offset + 2);
}

// True when `needed` bytes from `offset` are there. Otherwise records why: the data ran out (a
// sampler truncated the packet) or the enclosing header's length ends inside this header.
bool PacketDecoder::has_room(size_t offset, size_t needed, size_t declared_end, PacketLayer layer) {
  const size_t wanted = offset + needed;
  if (wanted <= p_.length && wanted <= declared_end) return true;
  if (declared_end < wanted && declared_end <= p_.length) {
    mark_malformed(layer, MalformedReason::kEnclosingLength, static_cast<uint32_t>(needed),
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
  while (offset + 2 <= p_.length && is_vlan_tpid(u16(offset))) offset += kVlanTagBytes;
  if (offset + 2 > p_.length) return true;
  if (u16(offset) != p_.ether_type) return false;
  return offset + 2 >= p_.length || p_.data[offset + 2] >> 4 == version;
}

// psample DATA starts at the MAC header on Ethernet devices and at the IP header on devices
// without one (tun, wireguard, ipip). PROTO is the skb's ethertype, so an Ethernet header shows
// it (or a VLAN TPID) at bytes 12-13, and a raw IP packet shows the matching version nibble.
bool PacketDecoder::detect_raw_link() const {
  const int version = p_.ether_type == kEtherTypeIpv4 ? 4 : p_.ether_type == kEtherTypeIpv6 ? 6 : -1;
  const bool looks_raw = version > 0 && p_.length > 0 && p_.data[0] >> 4 == version;
  if (p_.length < kEthernetHeaderBytes) return looks_raw;
  const uint32_t at_12 = u16(12);
  const bool looks_ethernet = at_12 == p_.ether_type || is_vlan_tpid(at_12);
  if (!looks_raw) return false;
  if (!looks_ethernet) return true;
  return !ethernet_outweighs_raw(version);
}

// Sets the network layer's ether type; false when the network layer is not there.
bool PacketDecoder::decode_ethernet(size_t& offset) {
  if (!has_room(0, kEthernetHeaderBytes, kUnstatedEnd, PacketLayer::kEthernet)) return false;
  set(PacketMember::kEthernet);
  uint32_t ether_type = u16(12);
  offset = kEthernetHeaderBytes;
  while (is_vlan_tpid(ether_type)) {
    if (!has_room(offset, kVlanTagBytes, kUnstatedEnd, PacketLayer::kVlan)) return false;
    p_.vlan_count++;
    ether_type = u16(offset + 2);
    offset += kVlanTagBytes;
  }
  p_.ether_type = ether_type;
  return true;
}

void PacketDecoder::decode_arp(size_t offset) {
  if (!has_room(offset, kArpFixedBytes, kUnstatedEnd, PacketLayer::kArp)) return;
  set_network(NetworkKind::kArp, offset);
  const bool ethernet_ipv4 =
      u16(offset) == 1 && u16(offset + 2) == kEtherTypeIpv4 && p_.data[offset + 4] == 6 && p_.data[offset + 5] == 4;
  p_.arp_addresses = ethernet_ipv4 && has_room(offset, kArpEthernetIpv4Bytes, kUnstatedEnd, PacketLayer::kArp);
}

IpPayload PacketDecoder::decode_ipv4(size_t offset) {
  if (!has_room(offset, kIpv4MinHeaderBytes, kUnstatedEnd, PacketLayer::kIpv4)) return {};
  set_network(NetworkKind::kIpv4, offset);
  p_.ip_protocol = p_.data[offset + 9];
  p_.ttl = p_.data[offset + 8];
  p_.fragment_offset = (u16(offset + 6) & 0x1fff) * 8;
  const uint8_t version = p_.data[offset] >> 4;
  if (version != 4) {
    mark_malformed(PacketLayer::kIpv4, MalformedReason::kIpv4Version, version);
    return {};
  }
  const size_t header_bytes = size_t{p_.data[offset] & 0x0fu} * 4;
  if (header_bytes < kIpv4MinHeaderBytes) {
    mark_malformed(PacketLayer::kIpv4, MalformedReason::kIpv4HeaderLength, static_cast<uint32_t>(header_bytes));
    return {};
  }
  // GSO packets sampled before segmentation (BIG TCP) carry total length 0: only the data bounds them.
  const uint32_t total_length = u16(offset + 2);
  const size_t declared_end = total_length == 0 ? kUnstatedEnd : offset + total_length;
  if (!has_room(offset, header_bytes, declared_end, PacketLayer::kIpv4)) return {};
  const bool first_fragment = (u16(offset + 6) & 0x1fff) == 0;
  return {true, p_.data[offset + 9], offset + header_bytes, declared_end, first_fragment};
}

IpPayload PacketDecoder::decode_ipv6(size_t offset) {
  if (!has_room(offset, kIpv6HeaderBytes, kUnstatedEnd, PacketLayer::kIpv6)) return {};
  set_network(NetworkKind::kIpv6, offset);
  p_.ipv6_protocol = p_.data[offset + 6];
  p_.ip_protocol = p_.ipv6_protocol;
  p_.ttl = p_.data[offset + 7];
  const uint8_t version = p_.data[offset] >> 4;
  if (version != 6) {
    mark_malformed(PacketLayer::kIpv6, MalformedReason::kIpv6Version, version);
    return {};
  }
  // Payload length 0 means a jumbogram or a BIG TCP GSO packet: only the data bounds them.
  const uint32_t payload_length = u16(offset + 4);
  const size_t declared_end = payload_length == 0 ? kUnstatedEnd : offset + kIpv6HeaderBytes + payload_length;
  const auto later_fragment = [&] { return p_.ipv6_fragment && (u16(p_.ipv6_fragment_offset + 2) & 0xfff8) != 0; };
  size_t cursor = offset + kIpv6HeaderBytes;
  bool extension = is_ipv6_extension(p_.ipv6_protocol);
  while (extension) {
    if (!has_room(cursor, kIpv6ExtensionMinBytes, declared_end, PacketLayer::kIpv6Extension)) return {};
    const size_t length = ipv6_extension_bytes(p_.ipv6_protocol, p_.data[cursor + 1]);
    if (!has_room(cursor, length, declared_end, PacketLayer::kIpv6Extension)) return {};
    p_.ipv6_extension_count++;
    if (p_.ipv6_protocol == kProtoFragment) {
      p_.ipv6_fragment = true;
      p_.ipv6_fragment_offset = cursor;
    }
    p_.ipv6_protocol = p_.data[cursor];
    p_.ip_protocol = p_.ipv6_protocol;
    if (p_.ipv6_fragment) p_.fragment_offset = u16(p_.ipv6_fragment_offset + 2) & 0xfff8;
    cursor += length;
    // Past a non-first fragment header comes the middle of the payload, not another header.
    extension = !later_fragment() && is_ipv6_extension(p_.ipv6_protocol);
  }
  return {true, p_.ipv6_protocol, cursor, declared_end, !later_fragment()};
}

void PacketDecoder::decode_transport(const IpPayload& payload) {
  const size_t start = payload.start;
  const size_t declared_end = payload.declared_end;
  switch (payload.protocol) {
    case kProtoTcp:
      return decode_tcp(start, declared_end);
    case kProtoUdp:
      if (!has_room(start, kUdpHeaderBytes, declared_end, PacketLayer::kUdp))
        return decode_ports_only(start, declared_end, PacketLayer::kUdp);
      return set_ports(TransportKind::kUdp, start);
    case kProtoSctp:
      if (!has_room(start, kSctpCommonHeaderBytes, declared_end, PacketLayer::kSctp))
        return decode_ports_only(start, declared_end, PacketLayer::kSctp);
      return set_ports(TransportKind::kSctp, start);
    case kProtoIcmp:
      return decode_icmp(start, declared_end, false);
    case kProtoIcmpv6:
      return decode_icmp(start, declared_end, true);
    case kProtoNone:
      return;
    default:
      p_.unknown_ip_protocol = true;
      p_.unknown_value = payload.protocol;
      set(PacketMember::kUnknown);
  }
}

void PacketDecoder::decode_tcp(size_t offset, size_t declared_end) {
  if (!has_room(offset, kTcpMinHeaderBytes, declared_end, PacketLayer::kTcp))
    return decode_ports_only(offset, declared_end, PacketLayer::kTcp);
  set_ports(TransportKind::kTcp, offset);
  p_.tcp_flags = p_.data[offset + 13];
  const size_t header_bytes = static_cast<size_t>(p_.data[offset + 12] >> 4) * 4;
  if (header_bytes < kTcpMinHeaderBytes) {
    mark_malformed(PacketLayer::kTcp, MalformedReason::kTcpDataOffset, static_cast<uint32_t>(header_bytes));
    return;
  }
  has_room(offset, header_bytes, declared_end, PacketLayer::kTcp);
}

// After a cut TCP/UDP/SCTP header: keeps the ports when the first 4 bytes made it.
void PacketDecoder::decode_ports_only(size_t offset, size_t declared_end, PacketLayer protocol) {
  if (room_left(offset, declared_end) < kPortBytes) return;
  p_.ports_protocol = protocol;
  set_ports(TransportKind::kPorts, offset);
}

void PacketDecoder::decode_icmp(size_t offset, size_t declared_end, bool v6) {
  const bool complete =
      has_room(offset, kIcmpHeaderBytes, declared_end, v6 ? PacketLayer::kIcmpv6 : PacketLayer::kIcmp);
  if (!complete && room_left(offset, declared_end) < kIcmpTypeCodeBytes) return;
  set_transport(v6 ? TransportKind::kIcmpv6 : TransportKind::kIcmp, offset);
  const uint8_t type = p_.data[offset];
  p_.icmp_type = type;
  p_.icmp_code = p_.data[offset + 1];
  if (!complete) return;
  p_.icmp_echo = v6 ? type == 128 || type == 129 : type == 8 || type == 0;
  if (p_.icmp_echo) {
    p_.icmp_id = u16(offset + 4);
    p_.icmp_seq = u16(offset + 6);
  }
  // Neighbor solicitation / advertisement and redirect carry the address asked or told about.
  if (v6 && (type == 135 || type == 136 || type == 137)) {
    p_.icmpv6_target = has_room(offset, kIcmpv6TargetMessageBytes, declared_end, PacketLayer::kIcmpv6);
  }
}

DecodedPacket PacketDecoder::decode() {
  p_.raw_link = detect_raw_link();
  size_t offset = 0;
  if (!p_.raw_link && !decode_ethernet(offset)) return p_;
  IpPayload payload;
  switch (p_.ether_type) {
    case kEtherTypeArp:
      decode_arp(offset);
      return p_;
    case kEtherTypeIpv4:
      payload = decode_ipv4(offset);
      break;
    case kEtherTypeIpv6:
      payload = decode_ipv6(offset);
      break;
    default:
      p_.unknown_value = p_.ether_type;
      set(PacketMember::kUnknown);
      return p_;
  }
  if (!payload.present) return p_;
  if (payload.has_transport_header) decode_transport(payload);
  if (payload.declared_end != kUnstatedEnd && payload.declared_end > p_.length) mark_truncated(PacketLayer::kPayload);
  return p_;
}

}  // namespace

DecodedPacket decode_packet(const uint8_t* data, size_t length, uint16_t proto) {
  return PacketDecoder(data, length, proto).decode();
}

AddressAt ip_address(const DecodedPacket& p, int which) {
  const size_t at = p.network_offset;
  switch (p.network) {
    case NetworkKind::kIpv4:
      return {at + 12 + 4 * static_cast<size_t>(which), 4};
    case NetworkKind::kIpv6:
      return {at + 8 + 16 * static_cast<size_t>(which), 16};
    case NetworkKind::kArp:
      if (p.arp_addresses) return {at + (which == 0 ? 14 : 24), 4};
      return {};
    case NetworkKind::kNone:
      return {};
  }
  return {};
}

const char* ip_protocol_label(uint8_t protocol) {
  switch (protocol) {
    case kProtoIcmp:
      return "ICMP";
    case kProtoTcp:
      return "TCP";
    case kProtoUdp:
      return "UDP";
    case kProtoIcmpv6:
      return "ICMPv6";
    case kProtoSctp:
      return "SCTP";
    default:
      return nullptr;
  }
}

}  // namespace ovnpsample
