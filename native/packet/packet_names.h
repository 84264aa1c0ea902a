// The names and sentences a decoded packet (packet_decoder.h) is told with, shared by its JSON
// (packet_json.cc) and its one-line description (packet_text.cc) so both say the same.
#pragma once

#include <cstdint>
#include <iterator>

#include "packet/packet_decoder.h"
#include "render/json_writer.h"

namespace ovnpsample {

inline const char* packet_layer_name(PacketLayer layer) {
  static constexpr const char* kNames[] = {"ethernet", "vlan", "arp",  "ipv4", "ipv6",   "ipv6-extension",
                                           "tcp",      "udp",  "sctp", "icmp", "icmpv6", "payload"};
  return kNames[static_cast<uint8_t>(layer)];
}

inline const char* icmp_type_name(uint8_t type) {
  static constexpr const char* kNames[] = {"echo-reply",
                                           nullptr,
                                           nullptr,
                                           "destination-unreachable",
                                           "source-quench",
                                           "redirect",
                                           nullptr,
                                           nullptr,
                                           "echo-request",
                                           "router-advertisement",
                                           "router-solicitation",
                                           "time-exceeded",
                                           "parameter-problem",
                                           "timestamp-request",
                                           "timestamp-reply"};
  return type < std::size(kNames) ? kNames[type] : nullptr;
}

inline const char* icmpv6_type_name(uint8_t type) {
  switch (type) {
    case 1:
      return "destination-unreachable";
    case 2:
      return "packet-too-big";
    case 3:
      return "time-exceeded";
    case 4:
      return "parameter-problem";
    case 128:
      return "echo-request";
    case 129:
      return "echo-reply";
    case 130:
      return "multicast-listener-query";
    case 131:
      return "multicast-listener-report";
    case 132:
      return "multicast-listener-done";
    case 133:
      return "router-solicitation";
    case 134:
      return "router-advertisement";
    case 135:
      return "neighbor-solicitation";
    case 136:
      return "neighbor-advertisement";
    case 137:
      return "redirect";
    case 143:
      return "multicast-listener-report-v2";
    default:
      return nullptr;
  }
}

// The TCP flags set, lowest bit first, comma-separated; as JSON strings when `quoted`.
inline void write_tcp_flags(JsonWriter& w, uint8_t flags, bool quoted) {
  static constexpr const char* kNames[] = {"FIN", "SYN", "RST", "PSH", "ACK", "URG", "ECE", "CWR"};
  bool first = true;
  for (uint32_t bit = 0; bit < 8; bit++) {
    if ((flags & (1u << bit)) == 0) continue;
    if (!first) w.character(',');
    if (quoted) w.character('"');
    w.text(kNames[bit]);
    if (quoted) w.character('"');
    first = false;
  }
}

// Why the packet is malformed, one sentence of fixed ASCII and numbers (nothing to escape in JSON).
inline void write_malformed_reason(JsonWriter& w, const DecodedPacket& p) {
  switch (p.reason) {
    case MalformedReason::kIpv4Version:
    case MalformedReason::kIpv6Version:
      w.literal("IP version ");
      w.number(p.reason_value);
      if (p.reason == MalformedReason::kIpv4Version)
        w.literal(" in a packet marked IPv4");
      else
        w.literal(" in a packet marked IPv6");
      break;
    case MalformedReason::kIpv4HeaderLength:
    case MalformedReason::kTcpDataOffset:
      if (p.reason == MalformedReason::kIpv4HeaderLength)
        w.literal("header length ");
      else
        w.literal("data offset ");
      w.number(p.reason_value);
      w.literal(" is below the minimum 20 bytes");
      break;
    case MalformedReason::kEnclosingLength:
      w.literal("the ");
      w.text(packet_layer_name(p.malformed_layer));
      w.literal(" header needs ");
      w.number(p.reason_value);
      w.literal(" bytes but the enclosing length leaves ");
      w.number(p.reason_left);
      break;
  }
}

}  // namespace ovnpsample
