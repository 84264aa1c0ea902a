#include "packet/packet_text.h"

#include "packet/address_text.h"
#include "packet/packet_decoder.h"
#include "packet/packet_names.h"
#include "render/json_writer.h"

namespace ovnpsample {

namespace {

constexpr uint32_t kArpRequest = 1;
constexpr uint32_t kArpReply = 2;

bool has_member(const DecodedPacket& p, PacketMember member) {
  for (size_t i = 0; i < p.member_count; i++) {
    if (p.members[i] == member) return true;
  }
  return false;
}

void write_mac(JsonWriter& w, const uint8_t* a) {
  format_mac(w.raw(kMacTextBytes), a);
  w.written(kMacTextBytes);
}

void write_ipv4(JsonWriter& w, const uint8_t* a) { w.written(format_ipv4(w.raw(kIpv4TextMax), a)); }

void write_ipv6(JsonWriter& w, const uint8_t* a) { w.written(format_ipv6(w.raw(kIpv6TextMax), a)); }

bool is_ipv6(const DecodedPacket& p) { return p.network == NetworkKind::kIpv6; }

// The source (at 0) or destination (at 1) address of the IP header.
void write_ip(JsonWriter& w, const DecodedPacket& p, int which) {
  if (is_ipv6(p))
    write_ipv6(w, p.data + p.network_offset + 8 + 16 * which);
  else
    write_ipv4(w, p.data + p.network_offset + 12 + 4 * which);
}

// RFC 5952 section 6: an IPv6 address next to a port goes in brackets.
void write_endpoint(JsonWriter& w, const DecodedPacket& p, int which) {
  if (is_ipv6(p)) w.character('[');
  write_ip(w, p, which);
  if (is_ipv6(p)) w.character(']');
  w.character(':');
  w.number(read_u16(p.data, p.transport_offset + 2 * which));
}

void write_addresses(JsonWriter& w, const DecodedPacket& p) {
  write_ip(w, p, 0);
  w.literal(" > ");
  write_ip(w, p, 1);
}

void write_vlan_prefix(JsonWriter& w, const DecodedPacket& p) {
  if (p.vlan_count == 0 || !has_member(p, PacketMember::kEthernet)) return;
  w.literal("vlan ");
  for (size_t i = 0; i < p.vlan_count; i++) {
    if (i != 0) w.character('.');
    w.number(read_u16(p.data, 14 + 4 * i) & 0x0fff);
  }
  w.character(' ');
}

void write_arp(JsonWriter& w, const DecodedPacket& p) {
  const size_t at = p.network_offset;
  const uint32_t op = read_u16(p.data, at + 6);
  if (op == kArpRequest && p.arp_addresses) {
    w.literal("ARP who-has ");
    write_ipv4(w, p.data + at + 24);
    w.literal(" tell ");
    write_ipv4(w, p.data + at + 14);
  } else if (op == kArpReply && p.arp_addresses) {
    w.literal("ARP ");
    write_ipv4(w, p.data + at + 14);
    w.literal(" is-at ");
    write_mac(w, p.data + at + 8);
  } else {
    w.literal("ARP op ");
    w.number(op);
  }
}

void write_icmp(JsonWriter& w, const DecodedPacket& p) {
  const size_t at = p.transport_offset;
  const bool v6 = p.transport == TransportKind::kIcmpv6;
  const uint8_t type = p.data[at];
  const uint8_t code = p.data[at + 1];
  write_addresses(w, p);
  if (v6)
    w.literal(" ICMPv6 ");
  else
    w.literal(" ICMP ");
  const char* name = v6 ? icmpv6_type_name(type) : icmp_type_name(type);
  if (name != nullptr) {
    w.text(name);
  } else {
    w.literal("type=");
    w.number(type);
  }
  if (code != 0 || name == nullptr) {
    w.literal(" code=");
    w.number(code);
  }
  if (p.icmp_echo) {
    w.literal(" id=");
    w.number(read_u16(p.data, at + 4));
    w.literal(" seq=");
    w.number(read_u16(p.data, at + 6));
  }
  if (p.icmpv6_target) {
    w.literal(" target=");
    write_ipv6(w, p.data + at + 8);
  }
}

void write_transport(JsonWriter& w, const DecodedPacket& p) {
  if (p.transport == TransportKind::kIcmp || p.transport == TransportKind::kIcmpv6) return write_icmp(w, p);
  const size_t at = p.transport_offset;
  write_endpoint(w, p, 0);
  w.literal(" > ");
  write_endpoint(w, p, 1);
  switch (p.transport) {
    case TransportKind::kTcp: {
      w.literal(" TCP [");
      write_tcp_flags(w, p.data[at + 13], false);
      w.character(']');
      return;
    }
    case TransportKind::kUdp:
      w.literal(" UDP");
      return;
    case TransportKind::kSctp:
      w.literal(" SCTP vtag=0x");
      w.number(read_u32(p.data, at + 4), 16);
      return;
    case TransportKind::kPorts:
      // The header cut after its ports: only TCP, UDP or SCTP get that far.
      if (p.ports_protocol == PacketLayer::kTcp)
        w.literal(" TCP");
      else if (p.ports_protocol == PacketLayer::kUdp)
        w.literal(" UDP");
      else
        w.literal(" SCTP");
      return;
    default:
      return;
  }
}

void write_protocol_label(JsonWriter& w, uint8_t protocol) {
  switch (protocol) {
    case kProtoIcmp:
      return w.literal("ICMP");
    case kProtoTcp:
      return w.literal("TCP");
    case kProtoUdp:
      return w.literal("UDP");
    case kProtoIcmpv6:
      return w.literal("ICMPv6");
    case kProtoSctp:
      return w.literal("SCTP");
    default:
      w.literal("proto ");
      w.number(protocol);
  }
}

// An IP packet whose transport header was not decoded: its protocol and, for a later fragment, where it sits.
void write_ip_only(JsonWriter& w, const DecodedPacket& p) {
  const size_t at = p.network_offset;
  write_addresses(w, p);
  w.character(' ');
  uint32_t fragment_offset;
  if (is_ipv6(p)) {
    write_protocol_label(w, p.ipv6_protocol);
    fragment_offset = p.ipv6_fragment ? read_u16(p.data, p.ipv6_fragment_offset + 2) & 0xfff8 : 0;
  } else {
    write_protocol_label(w, p.data[at + 9]);
    fragment_offset = (read_u16(p.data, at + 6) & 0x1fff) * 8;
  }
  if (fragment_offset != 0) {
    w.literal(" fragment offset=");
    w.number(fragment_offset);
  }
}

void write_problems(JsonWriter& w, const DecodedPacket& p) {
  if (p.truncated) {
    w.literal(" truncated in ");
    w.text(packet_layer_name(p.truncated_layer));
  }
  if (p.malformed) {
    w.literal(" malformed ");
    w.text(packet_layer_name(p.malformed_layer));
    w.literal(": ");
    write_malformed_reason(w, p);
  }
}

}  // namespace

void append_packet_text(std::string& out, const uint8_t* data, size_t length, uint16_t proto) {
  const DecodedPacket p = decode_packet(data, length, proto);
  JsonWriter w(out);
  write_vlan_prefix(w, p);
  if (p.network == NetworkKind::kArp) {
    write_arp(w, p);
    return write_problems(w, p);
  }
  if (p.network != NetworkKind::kNone) {
    if (p.transport != TransportKind::kNone)
      write_transport(w, p);
    else
      write_ip_only(w, p);
  } else if (has_member(p, PacketMember::kEthernet)) {
    write_mac(w, p.data + 6);
    w.literal(" > ");
    write_mac(w, p.data);
    w.literal(" ethertype 0x");
    if (p.ether_type < 0x1000) w.character('0');
    if (p.ether_type < 0x100) w.character('0');
    if (p.ether_type < 0x10) w.character('0');
    w.number(p.ether_type, 16);
  } else if (p.raw_link) {
    w.literal("IP");
  } else {
    w.literal("Ethernet");
  }
  w.literal(" len=");
  w.number(p.length);
  write_problems(w, p);
}

}  // namespace ovnpsample
