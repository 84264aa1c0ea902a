// Decodes a sampled packet's headers: what they are, where they sit in the data, and the values
// every form of the packet reads (addresses, protocol, ports, ICMP type and code, TCP flags, TTL):
// read here once, so the JSON (packet_json.cc), the one-line forms (packet_text.cc) and
// TypeScript's fields (packet_fields.h) never read those offsets themselves. Not their text.
// Pure C++17: no N-API, no system calls, no allocation.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ovnpsample {

// A header, or the bytes after the last header (kPayload), that a problem was found in.
enum class PacketLayer : uint8_t {
  kEthernet,
  kVlan,
  kArp,
  kIpv4,
  kIpv6,
  kIpv6Extension,
  kTcp,
  kUdp,
  kSctp,
  kIcmp,
  kIcmpv6,
  kPayload,
};

// The optional members of src/packet/types.ts DecodedPacket: they appear in the order decoding set them.
enum class PacketMember : uint8_t { kEthernet, kNetwork, kTransport, kUnknown, kTruncatedLayer, kMalformed };
constexpr size_t kPacketMemberCount = 6;

enum class NetworkKind : uint8_t { kNone, kArp, kIpv4, kIpv6 };
enum class TransportKind : uint8_t { kNone, kTcp, kUdp, kSctp, kIcmp, kIcmpv6, kPorts };
enum class MalformedReason : uint8_t {
  kIpv4Version,
  kIpv6Version,
  kIpv4HeaderLength,
  kTcpDataOffset,
  kEnclosingLength
};

// The upper-layer protocols read.
constexpr uint8_t kProtoIcmp = 1;
constexpr uint8_t kProtoTcp = 6;
constexpr uint8_t kProtoUdp = 17;
constexpr uint8_t kProtoIcmpv6 = 58;
constexpr uint8_t kProtoSctp = 132;

// The IPv6 extension headers read.
constexpr uint8_t kProtoHopByHop = 0;
constexpr uint8_t kProtoRouting = 43;
constexpr uint8_t kProtoFragment = 44;
constexpr uint8_t kProtoAuthentication = 51;
constexpr uint8_t kProtoDestinationOptions = 60;
constexpr size_t kIpv6HeaderBytes = 40;

// Every header field is read from `data` at the offsets below; each was checked to be in range.
struct DecodedPacket {
  const uint8_t* data = nullptr;
  size_t length = 0;
  // Of the network layer: after any VLAN tags, or psample's PROTO on a raw link.
  uint32_t ether_type = 0;
  bool raw_link = false;
  PacketMember members[kPacketMemberCount] = {};
  size_t member_count = 0;

  // Tag i: its TPID at 12 + 4i, its TCI at 14 + 4i.
  size_t vlan_count = 0;

  NetworkKind network = NetworkKind::kNone;
  size_t network_offset = 0;
  // Ethernet / IPv4 ARP, the only kind whose addresses are decoded (an OVN network carries no other).
  bool arp_addresses = false;
  // IPv6: the upper-layer protocol after the extension headers read, how many were read (from
  // network_offset + 40, each announced by the one before), and the last fragment header's offset.
  uint8_t ipv6_protocol = 0;
  size_t ipv6_extension_count = 0;
  bool ipv6_fragment = false;
  size_t ipv6_fragment_offset = 0;

  TransportKind transport = TransportKind::kNone;
  size_t transport_offset = 0;
  // kPorts: the header cut after its ports (kTcp, kUdp or kSctp).
  PacketLayer ports_protocol = PacketLayer::kTcp;
  bool icmp_echo = false;
  bool icmpv6_target = false;

  // The values the forms share. ip_protocol: IPv4's protocol field, or IPv6's upper-layer protocol
  // after its extension headers (ipv6_protocol); ttl: IPv4's TTL or IPv6's hop limit;
  // fragment_offset: in bytes, of IPv4's header or IPv6's fragment header.
  uint8_t ip_protocol = 0;
  uint8_t ttl = 0;
  uint32_t fragment_offset = 0;
  // kTcp, kUdp, kSctp, kPorts.
  uint32_t src_port = 0;
  uint32_t dst_port = 0;
  // kIcmp, kIcmpv6; id and seq with icmp_echo.
  uint8_t icmp_type = 0;
  uint8_t icmp_code = 0;
  uint32_t icmp_id = 0;
  uint32_t icmp_seq = 0;
  // kTcp.
  uint8_t tcp_flags = 0;

  bool unknown_ip_protocol = false;
  uint32_t unknown_value = 0;

  bool truncated = false;
  PacketLayer truncated_layer = PacketLayer::kEthernet;
  bool malformed = false;
  PacketLayer malformed_layer = PacketLayer::kEthernet;
  MalformedReason reason = MalformedReason::kEnclosingLength;
  // The version, header length or data offset found; for kEnclosingLength the bytes needed.
  uint32_t reason_value = 0;
  // kEnclosingLength: the bytes the enclosing header's length leaves.
  int64_t reason_left = 0;
};

// `proto` is psample's PROTO attribute (the skb ethertype, host order). Never reads past `length`:
// cut or contradictory headers are reported as truncated / malformed, protocols it does not read
// as unknown.
DecodedPacket decode_packet(const uint8_t* data, size_t length, uint16_t proto);

// Where the packet's source (which = 0) or destination (1) IP address starts, and its bytes (4 or
// 16): the IP header's, or for Ethernet / IPv4 ARP the sender's and target's protocol address.
// 0 bytes when the packet has none.
struct AddressAt {
  size_t offset = 0;
  size_t bytes = 0;
};
AddressAt ip_address(const DecodedPacket& p, int which);

// The IP protocol's name as the one-line forms write it: ICMP, TCP, UDP, ICMPv6, SCTP; null for another.
const char* ip_protocol_label(uint8_t protocol);

inline uint32_t read_u16(const uint8_t* data, size_t offset) { return uint32_t{data[offset]} << 8 | data[offset + 1]; }

inline uint32_t read_u32(const uint8_t* data, size_t offset) {
  return read_u16(data, offset) << 16 | read_u16(data, offset + 2);
}

// From the header's length byte: AH counts 4-byte words minus 2 (RFC 4302), the rest 8-byte words minus 1.
inline size_t ipv6_extension_bytes(uint8_t protocol, uint8_t length_field) {
  if (protocol == kProtoFragment) return 8;
  if (protocol == kProtoAuthentication) return (size_t{length_field} + 2) * 4;
  return (size_t{length_field} + 1) * 8;
}

}  // namespace ovnpsample
