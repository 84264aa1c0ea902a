// The sampled packet's one-line forms, the one source of each:
// - the description, tcpdump-like: the text output (sample_text.cc) writes it and
//   describePacket() (src/packet/describe.ts) returns it;
// - the tuple, `watch`'s packet column (render/event_human.cc), below.
// Pure C++17 (no N-API), from the decoder the JSON form uses (packet_decoder.h), so the two
// never disagree about what a packet is:
//
//   [vlan V[.V…] ]ARP who-has IP tell IP | ARP IP is-at MAC | ARP op N
//   [vlan …]SRC:PORT > DST:PORT TCP [FLAGS] | UDP | SCTP vtag=0xHEX     ([IPv6]:PORT in brackets)
//   [vlan …]SRC > DST ICMP|ICMPv6 NAME|type=T[ code=C][ id=I seq=S][ target=IP]
//   [vlan …]SRC > DST TCP|UDP|…|proto N[ fragment offset=O]             (no transport header)
//   [vlan …]MAC > MAC ethertype 0xHHHH | IP | Ethernet                  (nothing decoded above)
//
// each but ARP followed by ` len=BYTES`, and all by ` truncated in LAYER` and
// ` malformed LAYER: REASON` when they apply. ASCII only, never a newline.
//
// The tuple: the protocol and the two endpoints, without the endpoints' names:
//
//   TCP|UDP|SCTP|proto N SRC:PORT → DST:PORT                          ([IPv6]:PORT in brackets)
//   ICMP|ICMPv6 SRC → DST NAME|type T
//   TCP|…|proto N SRC → DST                                           (no ports)
//   ARP SENDER-IP|? → TARGET-IP|?
//   ethertype 0xHHHH                                                  (no network layer)
//
// UTF-8 (the arrow), never a newline.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ovnpsample {

// Appends the description of the packet. `proto` is psample's PROTO attribute (the skb
// ethertype, host order).
void append_packet_text(std::string& out, const uint8_t* data, size_t length, uint16_t proto);

struct DecodedPacket;
// The description of a packet decoded already.
void append_packet_text(std::string& out, const DecodedPacket& p);
// The tuple of a packet decoded already.
void append_packet_tuple(std::string& out, const DecodedPacket& p);

}  // namespace ovnpsample
