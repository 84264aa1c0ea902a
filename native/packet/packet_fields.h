// A decoded packet kept as 32-bit words, the form in which a batch's packets cross to TypeScript:
// decoded once per batch (decode_batch_fields), read there as numbers (src/packet/fields.ts) and
// here again, without decoding, by the writers of the lines that show a packet (load_fields).
// The layout is defined once, below; the addon exports it (abi.packetFields) and
// scripts/generate-native-abi.mjs writes it into src/native/abi.generated.ts.
//
// The words hold the decoder's values (packet_decoder.h) and where each header sits, so that a
// slot is the packet decoded: nothing in TypeScript reads a header's bytes. Address text is
// written once per batch into one string, which a slot points into (start << 8 | length).
// Pure C++17 (no N-API).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>

#include "packet/packet_decoder.h"
#include "wire/batch_record.h"

// X(identifier, JavaScript name, word index)
#define OVNPSAMPLE_PACKET_FIELDS(X)                                                                                \
  X(kFlags, flags, 0)         /* kPacketFlag* bits */                                                              \
  X(kEtherType, etherType, 1) /* of the network layer: after any VLAN tags, or PROTO on a raw link */              \
  X(kLength, length, 2)       /* bytes of sampled data */                                                          \
  X(kKinds, kinds, 3)         /* NetworkKind | TransportKind << 8 | ports' PacketLayer << 16 | vlan count << 24 */ \
  X(kProtocol, protocol, 4)   /* IPv4's protocol, IPv6's upper-layer protocol after its extension headers */       \
  X(kTtl, ttl, 5)             /* IPv4's TTL, IPv6's hop limit */                                                   \
  X(kSrcPort, srcPort, 6)                                                                                          \
  X(kDstPort, dstPort, 7)                                                                                          \
  X(kIcmp, icmp, 8)                      /* type | code << 8 */                                                    \
  X(kIcmpEcho, icmpEcho, 9)              /* id | seq << 16 */                                                      \
  X(kTcpFlags, tcpFlags, 10)             /* FIN = bit 0 … CWR = bit 7 */                                         \
  X(kFragmentOffset, fragmentOffset, 11) /* in bytes */                                                            \
  X(kSrcText, srcText, 12)               /* the source IP's text in the batch's string: start << 8 | length */     \
  X(kDstText, dstText, 13)                                                                                         \
  X(kHash, hash, 14)   /* FNV-1a of the data: samples of one packet carry the same bytes */                        \
  X(kProto, proto, 15) /* psample's PROTO */                                                                       \
  X(kVlan, vlan, 16)   /* the outer tag's TCI */                                                                   \
  /* Where the headers are and what went wrong, for the native writers only. */                                    \
  X(kNetworkOffset, networkOffset, 17)                                                                             \
  X(kTransportOffset, transportOffset, 18)                                                                         \
  X(kIpv6, ipv6, 19) /* extension headers read | last next header << 8 */                                          \
  X(kIpv6FragmentOffset, ipv6FragmentOffset, 20)                                                                   \
  X(kMembers, members, 21) /* PacketMember i in bits 4i..4i+3, their count << 24 */                                \
  X(kUnknown, unknown, 22)                                                                                         \
  X(kProblem, problem, 23) /* truncated layer | malformed layer << 8 | MalformedReason << 16 */                    \
  X(kReasonValue, reasonValue, 24)                                                                                 \
  X(kReasonLeft, reasonLeft, 25) /* signed */

// X(identifier, JavaScript name, bit) of the flags word.
#define OVNPSAMPLE_PACKET_FLAGS(X)                                                                \
  X(kPacketFlagDecoded, decoded, 0) /* the slot holds a packet (group events' slots are zeros) */ \
  X(kPacketFlagRawLink, rawLink, 1)                                                               \
  X(kPacketFlagTruncated, truncated, 2)                                                           \
  X(kPacketFlagMalformed, malformed, 3)                                                           \
  X(kPacketFlagArpAddresses, arpAddresses, 4)                                                     \
  X(kPacketFlagIcmpEcho, icmpEcho, 5)                                                             \
  X(kPacketFlagIcmpv6Target, icmpv6Target, 6)                                                     \
  X(kPacketFlagIpv6Fragment, ipv6Fragment, 7)                                                     \
  X(kPacketFlagUnknownIpProtocol, unknownIpProtocol, 8)                                           \
  X(kPacketFlagRepeat, repeat, 9) /* the previous sample of the batch carried the same bytes and PROTO */

namespace ovnpsample {

namespace packet_fields {
#define OVNPSAMPLE_PACKET_WORD(id, name, index) inline constexpr uint32_t id = index;
OVNPSAMPLE_PACKET_FIELDS(OVNPSAMPLE_PACKET_WORD)
#undef OVNPSAMPLE_PACKET_WORD
#define OVNPSAMPLE_PACKET_FLAG(id, name, bit) inline constexpr uint32_t id = 1u << (bit);
OVNPSAMPLE_PACKET_FLAGS(OVNPSAMPLE_PACKET_FLAG)
#undef OVNPSAMPLE_PACKET_FLAG
// Words a packet takes.
inline constexpr uint32_t kWords = 26;

struct Name {
  const char* name;
  uint32_t value;
};
#define OVNPSAMPLE_PACKET_ENTRY(id, name, value) Name{#name, value},
inline constexpr Name kWordNames[] = {OVNPSAMPLE_PACKET_FIELDS(OVNPSAMPLE_PACKET_ENTRY)};
inline constexpr Name kFlagNames[] = {OVNPSAMPLE_PACKET_FLAGS(OVNPSAMPLE_PACKET_ENTRY)};
#undef OVNPSAMPLE_PACKET_ENTRY
static_assert(std::size(kWordNames) == kWords, "every word is named once");
}  // namespace packet_fields

// FNV-1a, 32 bits.
uint32_t packet_hash(const uint8_t* data, size_t length);

// How a slot's kSrcText and kDstText say where its addresses are: as text appended to `texts`
// (start << 8 | length), or, for a consumer that keys on the addresses and makes their text only
// once per flow (the packet grouper's), where their bytes lie in the packet's data (offset << 8 |
// bytes, 4 or 16; 0: none).
enum class AddressForm { kText, kBytes };

// Writes the slot of `p` (decoded from psample's `proto`) into words[0, kWords), its address text
// appended to `texts` (with AddressForm::kText).
void store_fields(const DecodedPacket& p, uint16_t proto, uint32_t* words, std::string& texts,
                  AddressForm form = AddressForm::kText);
// The same, for a caller that hashed the packet's data already (packet_hash).
void store_fields(const DecodedPacket& p, uint16_t proto, uint32_t hash, uint32_t* words, std::string& texts,
                  AddressForm form);

// The decoded packet a slot holds, its bytes `data`. The words may come from anyone (JavaScript
// can write them): when they do not describe headers inside `data` and of its length, the packet
// is decoded again from `data` and the slot's PROTO, so a writer never reads outside `data`.
DecodedPacket load_fields(const uint32_t* words, const uint8_t* data, size_t length);

// Decodes the packet of each sample of a batch into words[i * kWords, (i + 1) * kWords) (group
// events' slots stay zero), the address text into `texts`; a sample whose packet is the previous
// one's (OVN samples a packet at several stages) gets a copy of its slot, marked
// kPacketFlagRepeat (the grouping then need not compare the bytes again). Returns the records
// walked: fewer than `count` when a record reaches outside the batch (the rest stay zero).
uint32_t decode_batch_fields(const Batch& b, uint32_t count, uint32_t* words, std::string& texts);

}  // namespace ovnpsample
