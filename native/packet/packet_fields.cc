#include "packet/packet_fields.h"

#include <algorithm>
#include <cstring>

#include "packet/address_text.h"
#include "wire/batch_layout.h"

namespace ovnpsample {

namespace {

using namespace packet_fields;

constexpr uint32_t kLastLayer = static_cast<uint32_t>(PacketLayer::kPayload);
constexpr uint32_t kLastMember = static_cast<uint32_t>(PacketMember::kMalformed);
constexpr uint32_t kLastReason = static_cast<uint32_t>(MalformedReason::kEnclosingLength);

uint32_t address_word(const DecodedPacket& p, int which, std::string& texts, AddressForm form) {
  const AddressAt address = ip_address(p, which);
  if (address.bytes == 0) return 0;
  if (form == AddressForm::kBytes) return static_cast<uint32_t>(address.offset << 8 | address.bytes);
  char text[kIpv6TextMax];
  const size_t length =
      address.bytes == 16 ? format_ipv6(text, p.data + address.offset) : format_ipv4(text, p.data + address.offset);
  const size_t start = texts.size();
  texts.append(text, length);
  return static_cast<uint32_t>(start << 8 | length);
}

bool fits(size_t offset, size_t needed, size_t length) { return offset <= length && needed <= length - offset; }

// The bytes each kind of header has for the writers to read, once the decoder accepted it.
size_t network_bytes(const DecodedPacket& p) {
  switch (p.network) {
    case NetworkKind::kArp:
      return p.arp_addresses ? 28 : 8;
    case NetworkKind::kIpv4:
      return 20;
    case NetworkKind::kIpv6:
      return kIpv6HeaderBytes;
    case NetworkKind::kNone:
      return 0;
  }
  return 0;
}

size_t transport_bytes(const DecodedPacket& p) {
  switch (p.transport) {
    case TransportKind::kTcp:
      return 20;
    case TransportKind::kUdp:
      return 8;
    case TransportKind::kSctp:
      return 12;
    case TransportKind::kPorts:
      return 4;
    case TransportKind::kIcmp:
    case TransportKind::kIcmpv6:
      return p.icmpv6_target ? 24 : 2;
    case TransportKind::kNone:
      return 0;
  }
  return 0;
}

// The IPv6 extension chain the JSON writer walks again, inside the data.
bool extension_chain_fits(const DecodedPacket& p) {
  if (p.ipv6_extension_count == 0) return true;
  if (p.network != NetworkKind::kIpv6) return false;
  uint8_t protocol = p.data[p.network_offset + 6];
  size_t cursor = p.network_offset + kIpv6HeaderBytes;
  for (size_t i = 0; i < p.ipv6_extension_count; i++) {
    if (!fits(cursor, 2, p.length)) return false;
    const size_t length = ipv6_extension_bytes(protocol, p.data[cursor + 1]);
    if (!fits(cursor, length, p.length)) return false;
    protocol = p.data[cursor];
    cursor += length;
  }
  return true;
}

// False when the words do not describe headers that lie inside the data.
bool restore(const uint32_t* w, DecodedPacket& p) {
  const uint32_t flags = w[kFlags];
  const uint32_t kinds = w[kKinds];
  const uint32_t members = w[kMembers];
  const uint32_t problem = w[kProblem];
  const uint32_t network = kinds & 0xff;
  const uint32_t transport = (kinds >> 8) & 0xff;
  const uint32_t ports_layer = (kinds >> 16) & 0xff;
  p.member_count = members >> 24;
  if (network > static_cast<uint32_t>(NetworkKind::kIpv6) || transport > static_cast<uint32_t>(TransportKind::kPorts) ||
      ports_layer > kLastLayer || p.member_count > kPacketMemberCount || (problem & 0xff) > kLastLayer ||
      ((problem >> 8) & 0xff) > kLastLayer || (problem >> 16) > kLastReason)
    return false;
  // Each member once, and the network and transport members only with their layer: the JSON
  // writer writes a member's name and then its layer.
  bool ethernet = false;
  uint32_t seen = 0;
  for (size_t i = 0; i < p.member_count; i++) {
    const uint32_t member = (members >> (4 * i)) & 0xf;
    if (member > kLastMember || (seen & (1u << member)) != 0) return false;
    seen |= 1u << member;
    p.members[i] = static_cast<PacketMember>(member);
    ethernet = ethernet || p.members[i] == PacketMember::kEthernet;
  }
  if (((seen & (1u << static_cast<uint32_t>(PacketMember::kNetwork))) != 0) != (network != 0) ||
      ((seen & (1u << static_cast<uint32_t>(PacketMember::kTransport))) != 0) != (transport != 0))
    return false;
  p.raw_link = (flags & kPacketFlagRawLink) != 0;
  p.truncated = (flags & kPacketFlagTruncated) != 0;
  p.malformed = (flags & kPacketFlagMalformed) != 0;
  p.arp_addresses = (flags & kPacketFlagArpAddresses) != 0;
  p.icmp_echo = (flags & kPacketFlagIcmpEcho) != 0;
  p.icmpv6_target = (flags & kPacketFlagIcmpv6Target) != 0;
  p.ipv6_fragment = (flags & kPacketFlagIpv6Fragment) != 0;
  p.unknown_ip_protocol = (flags & kPacketFlagUnknownIpProtocol) != 0;
  p.ether_type = w[kEtherType];
  p.vlan_count = kinds >> 24;
  p.network = static_cast<NetworkKind>(network);
  p.network_offset = w[kNetworkOffset];
  p.ipv6_extension_count = w[kIpv6] & 0xff;
  p.ipv6_protocol = static_cast<uint8_t>(w[kIpv6] >> 8);
  p.ipv6_fragment_offset = w[kIpv6FragmentOffset];
  p.transport = static_cast<TransportKind>(transport);
  p.transport_offset = w[kTransportOffset];
  p.ports_protocol = static_cast<PacketLayer>(ports_layer);
  p.ip_protocol = static_cast<uint8_t>(w[kProtocol]);
  p.ttl = static_cast<uint8_t>(w[kTtl]);
  p.fragment_offset = w[kFragmentOffset];
  p.src_port = w[kSrcPort] & 0xffff;
  p.dst_port = w[kDstPort] & 0xffff;
  p.icmp_type = static_cast<uint8_t>(w[kIcmp]);
  p.icmp_code = static_cast<uint8_t>(w[kIcmp] >> 8);
  p.icmp_id = w[kIcmpEcho] & 0xffff;
  p.icmp_seq = w[kIcmpEcho] >> 16;
  p.tcp_flags = static_cast<uint8_t>(w[kTcpFlags]);
  p.unknown_value = w[kUnknown];
  p.truncated_layer = static_cast<PacketLayer>(problem & 0xff);
  p.malformed_layer = static_cast<PacketLayer>((problem >> 8) & 0xff);
  p.reason = static_cast<MalformedReason>(problem >> 16);
  p.reason_value = w[kReasonValue];
  p.reason_left = static_cast<int32_t>(w[kReasonLeft]);
  if (ethernet && !fits(0, 14 + 4 * p.vlan_count, p.length)) return false;
  if (p.network != NetworkKind::kNone && !fits(p.network_offset, network_bytes(p), p.length)) return false;
  if (p.transport != TransportKind::kNone && !fits(p.transport_offset, transport_bytes(p), p.length)) return false;
  if (p.ipv6_fragment && !fits(p.ipv6_fragment_offset, 8, p.length)) return false;
  return extension_chain_fits(p);
}

}  // namespace

uint32_t packet_hash(const uint8_t* data, size_t length) {
  uint32_t hash = 0x811c9dc5;
  for (size_t i = 0; i < length; i++) hash = (hash ^ data[i]) * 0x01000193;
  return hash;
}

void store_fields(const DecodedPacket& p, uint16_t proto, uint32_t* w, std::string& texts, AddressForm form) {
  store_fields(p, proto, packet_hash(p.data, p.length), w, texts, form);
}

void store_fields(const DecodedPacket& p, uint16_t proto, uint32_t hash, uint32_t* w, std::string& texts,
                  AddressForm form) {
  w[kFlags] = kPacketFlagDecoded | (p.raw_link ? kPacketFlagRawLink : 0) | (p.truncated ? kPacketFlagTruncated : 0) |
              (p.malformed ? kPacketFlagMalformed : 0) | (p.arp_addresses ? kPacketFlagArpAddresses : 0) |
              (p.icmp_echo ? kPacketFlagIcmpEcho : 0) | (p.icmpv6_target ? kPacketFlagIcmpv6Target : 0) |
              (p.ipv6_fragment ? kPacketFlagIpv6Fragment : 0) |
              (p.unknown_ip_protocol ? kPacketFlagUnknownIpProtocol : 0);
  w[kEtherType] = p.ether_type;
  w[kLength] = static_cast<uint32_t>(p.length);
  w[kKinds] = static_cast<uint32_t>(p.network) | static_cast<uint32_t>(p.transport) << 8 |
              static_cast<uint32_t>(p.ports_protocol) << 16 |
              static_cast<uint32_t>(std::min<size_t>(p.vlan_count, 255)) << 24;
  w[kProtocol] = p.ip_protocol;
  w[kTtl] = p.ttl;
  w[kSrcPort] = p.src_port;
  w[kDstPort] = p.dst_port;
  w[kIcmp] = uint32_t{p.icmp_type} | uint32_t{p.icmp_code} << 8;
  w[kIcmpEcho] = p.icmp_id | p.icmp_seq << 16;
  w[kTcpFlags] = p.tcp_flags;
  w[kFragmentOffset] = p.fragment_offset;
  w[kSrcText] = address_word(p, 0, texts, form);
  w[kDstText] = address_word(p, 1, texts, form);
  w[kHash] = hash;
  w[kProto] = proto;
  w[kVlan] = p.vlan_count > 0 ? read_u16(p.data, 14) : 0;
  w[kNetworkOffset] = static_cast<uint32_t>(p.network_offset);
  w[kTransportOffset] = static_cast<uint32_t>(p.transport_offset);
  w[kIpv6] = static_cast<uint32_t>(std::min<size_t>(p.ipv6_extension_count, 255)) | uint32_t{p.ipv6_protocol} << 8;
  w[kIpv6FragmentOffset] = static_cast<uint32_t>(p.ipv6_fragment_offset);
  uint32_t members = static_cast<uint32_t>(p.member_count) << 24;
  for (size_t i = 0; i < p.member_count; i++) members |= static_cast<uint32_t>(p.members[i]) << (4 * i);
  w[kMembers] = members;
  w[kUnknown] = p.unknown_value;
  w[kProblem] = static_cast<uint32_t>(p.truncated_layer) | static_cast<uint32_t>(p.malformed_layer) << 8 |
                static_cast<uint32_t>(p.reason) << 16;
  w[kReasonValue] = p.reason_value;
  w[kReasonLeft] = static_cast<uint32_t>(static_cast<int32_t>(p.reason_left));
}

DecodedPacket load_fields(const uint32_t* words, const uint8_t* data, size_t length) {
  DecodedPacket p;
  p.data = data;
  p.length = length;
  if ((words[kFlags] & kPacketFlagDecoded) != 0 && words[kLength] == length && restore(words, p)) return p;
  return decode_packet(data, length, static_cast<uint16_t>(words[kProto]));
}

uint32_t decode_batch_fields(const Batch& b, uint32_t count, uint32_t* words, std::string& texts) {
  size_t offset = 0;
  const uint32_t* previous = nullptr;
  const uint8_t* previous_data = nullptr;
  uint32_t previous_length = 0;
  uint16_t previous_proto = 0;
  for (uint32_t i = 0; i < count; i++) {
    Record r;
    if (!read_record(b, offset, r)) return i;
    uint32_t* slot = words + size_t{i} * kWords;
    if (!r.is_sample()) {
      std::fill(slot, slot + kWords, 0);
    } else {
      const auto proto = static_cast<uint16_t>(b.load<uint32_t>(r.at + layout::record::kOutTcProto) >> 16);
      if (previous != nullptr && previous_proto == proto && previous_length == r.data_length &&
          (r.data_length == 0 || std::memcmp(previous_data, r.data, r.data_length) == 0)) {
        std::copy(previous, previous + kWords, slot);
        slot[kFlags] |= kPacketFlagRepeat;
      } else {
        store_fields(decode_packet(r.data, r.data_length, proto), proto, slot, texts);
      }
      previous = slot;
      previous_data = r.data;
      previous_length = r.data_length;
      previous_proto = proto;
    }
    offset += r.length;
  }
  return count;
}

}  // namespace ovnpsample
