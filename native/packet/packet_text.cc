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

// The source (at 0) or destination (at 1) address of the IP header, or ARP's sender and target.
void write_ip(JsonWriter& w, const DecodedPacket& p, int which) {
  const AddressAt address = ip_address(p, which);
  if (address.bytes == 16)
    write_ipv6(w, p.data + address.offset);
  else
    write_ipv4(w, p.data + address.offset);
}

// RFC 5952 section 6: an IPv6 address next to a port goes in brackets.
void write_endpoint(JsonWriter& w, const DecodedPacket& p, int which) {
  if (is_ipv6(p)) w.character('[');
  write_ip(w, p, which);
  if (is_ipv6(p)) w.character(']');
  w.character(':');
  w.number(which == 0 ? p.src_port : p.dst_port);
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
  const bool v6 = p.transport == TransportKind::kIcmpv6;
  const uint8_t type = p.icmp_type;
  const uint8_t code = p.icmp_code;
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
    w.number(p.icmp_id);
    w.literal(" seq=");
    w.number(p.icmp_seq);
  }
  if (p.icmpv6_target) {
    w.literal(" target=");
    write_ipv6(w, p.data + p.transport_offset + 8);
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
      write_tcp_flags(w, p.tcp_flags, false);
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
  if (const char* label = ip_protocol_label(protocol)) return w.text(label);
  w.literal("proto ");
  w.number(protocol);
}

// An IP packet whose transport header was not decoded: its protocol and, for a later fragment, where it sits.
void write_ip_only(JsonWriter& w, const DecodedPacket& p) {
  write_addresses(w, p);
  w.character(' ');
  write_protocol_label(w, p.ip_protocol);
  if (p.fragment_offset != 0) {
    w.literal(" fragment offset=");
    w.number(p.fragment_offset);
  }
}

void write_hex4(JsonWriter& w, uint32_t value) {
  if (value < 0x1000) w.character('0');
  if (value < 0x100) w.character('0');
  if (value < 0x10) w.character('0');
  w.number(value, 16);
}

// The tuple's address of one side, for ARP "?" when it was not decoded.
void write_tuple_ip(JsonWriter& w, const DecodedPacket& p, int which) {
  if (ip_address(p, which).bytes == 0) return w.character('?');
  write_ip(w, p, which);
}

constexpr char kArrow[] = " \u2192 ";

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
  append_packet_text(out, decode_packet(data, length, proto));
}

void append_packet_tuple(std::string& out, const DecodedPacket& p) {
  JsonWriter w(out);
  if (p.network == NetworkKind::kNone) {
    w.literal("ethertype 0x");
    return write_hex4(w, p.ether_type);
  }
  if (p.network == NetworkKind::kArp) {
    w.literal("ARP ");
    write_tuple_ip(w, p, 0);
    w.literal(kArrow);
    return write_tuple_ip(w, p, 1);
  }
  write_protocol_label(w, p.ip_protocol);
  w.character(' ');
  switch (p.transport) {
    case TransportKind::kTcp:
    case TransportKind::kUdp:
    case TransportKind::kSctp:
    case TransportKind::kPorts:
      write_endpoint(w, p, 0);
      w.literal(kArrow);
      return write_endpoint(w, p, 1);
    case TransportKind::kIcmp:
    case TransportKind::kIcmpv6: {
      write_ip(w, p, 0);
      w.literal(kArrow);
      write_ip(w, p, 1);
      w.character(' ');
      const char* name =
          p.transport == TransportKind::kIcmpv6 ? icmpv6_type_name(p.icmp_type) : icmp_type_name(p.icmp_type);
      if (name != nullptr) return w.text(name);
      w.literal("type ");
      return w.number(p.icmp_type);
    }
    case TransportKind::kNone:
      write_ip(w, p, 0);
      w.literal(kArrow);
      return write_ip(w, p, 1);
  }
}

void append_packet_text(std::string& out, const DecodedPacket& p) {
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
    write_hex4(w, p.ether_type);
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
