// The sampled packet in one short human line, tcpdump-like, the one source of it: the text
// output (sample_text.cc) writes it and describePacket() (src/packet/describe.ts) returns it.
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
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ovnpsample {

// Appends the description of the packet. `proto` is psample's PROTO attribute (the skb
// ethertype, host order).
void append_packet_text(std::string& out, const uint8_t* data, size_t length, uint16_t proto);

}  // namespace ovnpsample
