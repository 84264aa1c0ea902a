#include "packet/packet_json.h"

#include "packet/address_text.h"
#include "packet/packet_decoder.h"
#include "packet/packet_names.h"
#include "render/json_writer.h"

namespace ovnpsample {

namespace {

const char* ipv6_extension_name(uint8_t protocol) {
  switch (protocol) {
    case kProtoHopByHop:
      return "hop-by-hop";
    case kProtoRouting:
      return "routing";
    case kProtoFragment:
      return "fragment";
    case kProtoDestinationOptions:
      return "destination-options";
    default:
      return "authentication";
  }
}

// The address text forms are src/packet/address.ts's (psample's tunnel metadata still uses it):
// a quoted JSON string each, which never needs escaping.

void write_mac(JsonWriter& w, const uint8_t* data, size_t offset) {
  char* at = w.raw(kMacTextBytes + 2);
  at[0] = '"';
  format_mac(at + 1, data + offset);
  at[kMacTextBytes + 1] = '"';
  w.written(kMacTextBytes + 2);
}

void write_ipv4(JsonWriter& w, const uint8_t* data, size_t offset) {
  char* at = w.raw(kIpv4TextMax + 2);
  *at = '"';
  const size_t length = format_ipv4(at + 1, data + offset);
  at[length + 1] = '"';
  w.written(length + 2);
}

void write_ipv6(JsonWriter& w, const uint8_t* data, size_t offset) {
  char* at = w.raw(kIpv6TextMax + 2);
  *at = '"';
  const size_t length = format_ipv6(at + 1, data + offset);
  at[length + 1] = '"';
  w.written(length + 2);
}

void write_ethernet(JsonWriter& w, const DecodedPacket& p) {
  w.literal("{\"dst\":");
  write_mac(w, p.data, 0);
  w.literal(",\"src\":");
  write_mac(w, p.data, 6);
  w.literal(",\"vlans\":[");
  for (size_t i = 0; i < p.vlan_count; i++) {
    const uint32_t tci = read_u16(p.data, 14 + 4 * i);
    if (i != 0) w.character(',');
    w.literal("{\"tpid\":");
    w.number(read_u16(p.data, 12 + 4 * i));
    w.literal(",\"pcp\":");
    w.number(tci >> 13);
    w.literal(",\"dei\":");
    w.boolean((tci & 0x1000) != 0);
    w.literal(",\"vid\":");
    w.number(tci & 0x0fff);
    w.character('}');
  }
  w.literal("]}");
}

void write_arp(JsonWriter& w, const DecodedPacket& p) {
  const size_t at = p.network_offset;
  w.literal("{\"kind\":\"arp\",\"hardwareType\":");
  w.number(read_u16(p.data, at));
  w.literal(",\"protocolType\":");
  w.number(read_u16(p.data, at + 2));
  w.literal(",\"op\":");
  w.number(read_u16(p.data, at + 6));
  if (p.arp_addresses) {
    w.literal(",\"senderMac\":");
    write_mac(w, p.data, at + 8);
    w.literal(",\"senderIp\":");
    write_ipv4(w, p.data, at + 14);
    w.literal(",\"targetMac\":");
    write_mac(w, p.data, at + 18);
    w.literal(",\"targetIp\":");
    write_ipv4(w, p.data, at + 24);
  }
  w.character('}');
}

void write_ipv4_header(JsonWriter& w, const DecodedPacket& p) {
  const size_t at = p.network_offset;
  const uint32_t tos = p.data[at + 1];
  const uint32_t flags_fragment = read_u16(p.data, at + 6);
  w.literal("{\"kind\":\"ipv4\",\"version\":4,\"ihl\":");
  w.number(p.data[at] & 0x0f);
  w.literal(",\"dscp\":");
  w.number(tos >> 2);
  w.literal(",\"ecn\":");
  w.number(tos & 3);
  w.literal(",\"totalLength\":");
  w.number(read_u16(p.data, at + 2));
  w.literal(",\"id\":");
  w.number(read_u16(p.data, at + 4));
  w.literal(",\"dontFragment\":");
  w.boolean((flags_fragment & 0x4000) != 0);
  w.literal(",\"moreFragments\":");
  w.boolean((flags_fragment & 0x2000) != 0);
  // In bytes (the header field times 8), as the TypeScript type has it.
  w.literal(",\"fragmentOffset\":");
  w.number(p.fragment_offset);
  w.literal(",\"ttl\":");
  w.number(p.ttl);
  w.literal(",\"protocol\":");
  w.number(p.ip_protocol);
  w.literal(",\"src\":");
  write_ipv4(w, p.data, at + 12);
  w.literal(",\"dst\":");
  write_ipv4(w, p.data, at + 16);
  w.character('}');
}

void write_ipv6_header(JsonWriter& w, const DecodedPacket& p) {
  const size_t at = p.network_offset;
  const uint32_t first = read_u32(p.data, at);
  const uint32_t traffic_class = (first >> 20) & 0xff;
  w.literal("{\"kind\":\"ipv6\",\"version\":6,\"dscp\":");
  w.number(traffic_class >> 2);
  w.literal(",\"ecn\":");
  w.number(traffic_class & 3);
  w.literal(",\"flowLabel\":");
  w.number(first & 0xfffff);
  w.literal(",\"payloadLength\":");
  w.number(read_u16(p.data, at + 4));
  w.literal(",\"nextHeader\":");
  w.number(p.data[at + 6]);
  w.literal(",\"hopLimit\":");
  w.number(p.ttl);
  w.literal(",\"src\":");
  write_ipv6(w, p.data, at + 8);
  w.literal(",\"dst\":");
  write_ipv6(w, p.data, at + 24);
  w.literal(",\"extensions\":[");
  // The chain again, as far as the decoder read it: each header announced by the one before.
  uint8_t protocol = p.data[at + 6];
  size_t cursor = at + kIpv6HeaderBytes;
  for (size_t i = 0; i < p.ipv6_extension_count; i++) {
    const size_t length = ipv6_extension_bytes(protocol, p.data[cursor + 1]);
    if (i != 0) w.character(',');
    w.literal("{\"protocol\":");
    w.number(protocol);
    w.literal(",\"name\":\"");
    w.text(ipv6_extension_name(protocol));
    w.literal("\",\"length\":");
    w.number(length);
    w.character('}');
    protocol = p.data[cursor];
    cursor += length;
  }
  w.literal("],\"protocol\":");
  w.number(p.ipv6_protocol);
  if (p.ipv6_fragment) {
    const uint32_t offset_flags = read_u16(p.data, p.ipv6_fragment_offset + 2);
    w.literal(",\"fragment\":{\"offset\":");
    w.number(p.fragment_offset);
    w.literal(",\"moreFragments\":");
    w.boolean((offset_flags & 1) != 0);
    w.literal(",\"id\":");
    w.number(read_u32(p.data, p.ipv6_fragment_offset + 4));
    w.character('}');
  }
  w.character('}');
}

void write_ports(JsonWriter& w, const DecodedPacket& p) {
  w.literal(",\"srcPort\":");
  w.number(p.src_port);
  w.literal(",\"dstPort\":");
  w.number(p.dst_port);
}

void write_icmp(JsonWriter& w, const DecodedPacket& p) {
  const bool v6 = p.transport == TransportKind::kIcmpv6;
  const uint8_t type = p.icmp_type;
  if (v6)
    w.literal("{\"kind\":\"icmpv6\",\"type\":");
  else
    w.literal("{\"kind\":\"icmp\",\"type\":");
  w.number(type);
  w.literal(",\"code\":");
  w.number(p.icmp_code);
  if (const char* name = v6 ? icmpv6_type_name(type) : icmp_type_name(type)) {
    w.literal(",\"name\":\"");
    w.text(name);
    w.character('"');
  }
  if (p.icmp_echo) {
    w.literal(",\"id\":");
    w.number(p.icmp_id);
    w.literal(",\"seq\":");
    w.number(p.icmp_seq);
  }
  if (p.icmpv6_target) {
    w.literal(",\"target\":");
    write_ipv6(w, p.data, p.transport_offset + 8);
  }
  w.character('}');
}

void write_transport(JsonWriter& w, const DecodedPacket& p) {
  const size_t at = p.transport_offset;
  switch (p.transport) {
    case TransportKind::kTcp: {
      w.literal("{\"kind\":\"tcp\"");
      write_ports(w, p);
      w.literal(",\"seq\":");
      w.number(read_u32(p.data, at + 4));
      w.literal(",\"ack\":");
      w.number(read_u32(p.data, at + 8));
      w.literal(",\"dataOffset\":");
      w.number(p.data[at + 12] >> 4);
      w.literal(",\"flags\":[");
      write_tcp_flags(w, p.tcp_flags, true);
      w.literal("],\"window\":");
      w.number(read_u16(p.data, at + 14));
      w.character('}');
      return;
    }
    case TransportKind::kUdp:
      w.literal("{\"kind\":\"udp\"");
      write_ports(w, p);
      w.literal(",\"length\":");
      w.number(read_u16(p.data, at + 4));
      w.character('}');
      return;
    case TransportKind::kSctp:
      w.literal("{\"kind\":\"sctp\"");
      write_ports(w, p);
      w.literal(",\"verificationTag\":");
      w.number(read_u32(p.data, at + 4));
      w.character('}');
      return;
    case TransportKind::kPorts:
      w.literal("{\"kind\":\"ports\",\"protocol\":\"");
      w.text(packet_layer_name(p.ports_protocol));
      w.character('"');
      write_ports(w, p);
      w.character('}');
      return;
    case TransportKind::kIcmp:
    case TransportKind::kIcmpv6:
      return write_icmp(w, p);
    case TransportKind::kNone:
      return;
  }
}

// Fixed ASCII and numbers: nothing in a reason needs escaping.
void write_malformed(JsonWriter& w, const DecodedPacket& p) {
  w.literal("{\"layer\":\"");
  w.text(packet_layer_name(p.malformed_layer));
  w.literal("\",\"reason\":\"");
  write_malformed_reason(w, p);
  w.literal("\"}");
}

}  // namespace

void append_packet_json(std::string& out, const uint8_t* data, size_t length, uint16_t proto) {
  append_packet_json(out, decode_packet(data, length, proto));
}

void append_packet_json(std::string& out, const DecodedPacket& p) {
  JsonWriter w(out);
  w.literal("{\"link\":");
  if (p.raw_link)
    w.literal("\"raw\"");
  else
    w.literal("\"ethernet\"");
  w.literal(",\"length\":");
  w.number(p.length);
  w.literal(",\"etherType\":");
  w.number(p.ether_type);
  w.literal(",\"truncated\":");
  w.boolean(p.truncated);
  for (size_t i = 0; i < p.member_count; i++) {
    switch (p.members[i]) {
      case PacketMember::kEthernet:
        w.literal(",\"ethernet\":");
        write_ethernet(w, p);
        break;
      case PacketMember::kNetwork:
        w.literal(",\"network\":");
        if (p.network == NetworkKind::kArp)
          write_arp(w, p);
        else if (p.network == NetworkKind::kIpv4)
          write_ipv4_header(w, p);
        else
          write_ipv6_header(w, p);
        break;
      case PacketMember::kTransport:
        w.literal(",\"transport\":");
        write_transport(w, p);
        break;
      case PacketMember::kUnknown:
        if (p.unknown_ip_protocol)
          w.literal(",\"unknown\":{\"kind\":\"ip-protocol\",\"value\":");
        else
          w.literal(",\"unknown\":{\"kind\":\"ethertype\",\"value\":");
        w.number(p.unknown_value);
        w.character('}');
        break;
      case PacketMember::kTruncatedLayer:
        w.literal(",\"truncatedLayer\":\"");
        w.text(packet_layer_name(p.truncated_layer));
        w.character('"');
        break;
      case PacketMember::kMalformed:
        w.literal(",\"malformed\":");
        write_malformed(w, p);
        break;
    }
  }
  w.character('}');
}

}  // namespace ovnpsample
