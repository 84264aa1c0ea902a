// The sampled packet's JSON form, the one source of it: decodePacket() (src/packet/decode.ts)
// parses it, the JSON output formats (listen's lines, watch's events) write it. Pure C++17 (no N-API, no system calls,
// no allocation besides appending to the caller's string), so it can be unit-tested and fuzzed on its own
// (native/tests, native/fuzz).
//
// Reads the Ethernet header (or none: raw IP links), 802.1Q/802.1ad tags, ARP, IPv4, IPv6 with
// its extension headers, TCP, UDP, SCTP, ICMP and ICMPv6 (native/packet/packet_decoder.h). Never reads
// past `length`: cut or contradictory headers are reported in `truncated`/`truncatedLayer`/
// `malformed`, protocols it does not read in `unknown`. The members and their order are
// src/packet/types.ts DecodedPacket's: an optional member appears in the order decoding set it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ovnpsample {

// Appends the JSON of the decoded packet (what decodePacket() returns, as JSON.stringify writes
// it). `proto` is psample's PROTO attribute (the skb ethertype, host order).
void append_packet_json(std::string& out, const uint8_t* data, size_t length, uint16_t proto);

struct DecodedPacket;
// The same, of a packet decoded already (packet_fields.h keeps batches' packets decoded).
void append_packet_json(std::string& out, const DecodedPacket& p);

}  // namespace ovnpsample
