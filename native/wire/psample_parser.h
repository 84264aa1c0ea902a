// Pure C++17 parser for psample generic-netlink messages.
// No N-API, no system calls, no allocation besides appending to the caller's vector,
// so it can be unit-tested and fuzzed on its own (native/tests, native/fuzz).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "wire/socket_stats.h"

namespace ovnpsample {

// include/uapi/linux/psample.h, after the 5.12 stable fix (GROUP_REFCOUNT=7, TUNNEL=8).
enum PsampleAttr : uint16_t {
  kAttrIifindex = 0,
  kAttrOifindex = 1,
  kAttrOrigsize = 2,
  kAttrSampleGroup = 3,
  kAttrGroupSeq = 4,
  kAttrSampleRate = 5,
  kAttrData = 6,
  kAttrGroupRefcount = 7,
  kAttrTunnel = 8,
  kAttrPad = 9,
  kAttrOutTc = 10,
  kAttrOutTcOcc = 11,
  kAttrLatency = 12,
  kAttrTimestamp = 13,
  kAttrProto = 14,
  kAttrUserCookie = 15,
  kAttrSampleProbability = 16,
  kAttrCount = 17,
};

enum PsampleCommand : uint8_t {
  kCmdSample = 0,
  kCmdGetGroup = 1,
  kCmdNewGroup = 2,
  kCmdDelGroup = 3,
};

// PSAMPLE_TUNNEL_KEY_ATTR_* (mirrors OVS_TUNNEL_KEY_ATTR_*).
enum TunnelAttr : uint16_t {
  kTunId = 0,
  kTunIpv4Src = 1,
  kTunIpv4Dst = 2,
  kTunTos = 3,
  kTunTtl = 4,
  kTunDontFragment = 5,
  kTunCsum = 6,
  kTunOam = 7,
  kTunGeneveOpts = 8,
  kTunTpSrc = 9,
  kTunTpDst = 10,
  kTunVxlanOpts = 11,
  kTunIpv6Src = 12,
  kTunIpv6Dst = 13,
  kTunPad = 14,
  kTunErspanOpts = 15,
  kTunIpv4InfoBridge = 16,
  kTunCount = 17,
};

// A slice of the buffer given to parse_datagram (offset from its first byte).
struct ByteRange {
  uint32_t offset = 0;
  uint32_t length = 0;
};

struct Tunnel {
  uint32_t present = 0;  // bit (1u << TunnelAttr) per attribute seen
  uint64_t id = 0;       // host order (the attribute is be64)
  uint8_t ipv4_src[4] = {};
  uint8_t ipv4_dst[4] = {};
  uint8_t ipv6_src[16] = {};
  uint8_t ipv6_dst[16] = {};
  uint8_t tos = 0;
  uint8_t ttl = 0;
  uint16_t tp_src = 0;  // host order (the attribute is be16)
  uint16_t tp_dst = 0;
  uint32_t vxlan_gbp = 0;  // OVS_VXLAN_EXT_GBP inside VXLAN_OPTS
  ByteRange geneve_opts;   // raw option TLVs
  ByteRange erspan_opts;   // raw struct erspan_metadata
};

enum class MessageKind : uint8_t {
  kSample,      // cmd SAMPLE
  kGroup,       // cmd NEW_GROUP / DEL_GROUP / GET_GROUP (reply)
  kError,       // NLMSG_ERROR (error == 0 is an ACK)
  kDone,        // NLMSG_DONE
  kOverrun,     // NLMSG_OVERRUN
  kController,  // generic-netlink controller (GENL_ID_CTRL): `whole` is for genl_family.h to read
};

struct Message {
  MessageKind kind = MessageKind::kSample;
  uint8_t cmd = 0;
  uint8_t version = 0;
  uint16_t nlmsg_type = 0;
  uint16_t nlmsg_flags = 0;
  uint32_t nlmsg_seq = 0;
  uint32_t nlmsg_pid = 0;
  uint32_t present = 0;         // bit (1u << PsampleAttr) per attribute seen, after layout normalisation
  bool swapped_layout = false;  // attributes 7/8 were in the unfixed 5.8-5.11 order
  bool probability = false;     // SAMPLE_PROBABILITY flag: rate is a probability scaled to UINT32_MAX
  uint16_t iifindex = 0;
  uint16_t oifindex = 0;
  uint16_t out_tc = 0;
  uint16_t proto = 0;
  uint32_t origsize = 0;
  uint32_t group = 0;
  uint32_t group_seq = 0;
  uint32_t rate = 0;
  uint32_t group_refcount = 0;
  uint64_t out_tc_occ = 0;
  uint64_t latency = 0;
  uint64_t timestamp = 0;
  ByteRange data;
  ByteRange user_cookie;
  Tunnel tunnel;               // meaningful when present has bit kAttrTunnel
  uint16_t unknown_attrs = 0;  // attributes > 16 (or unknown tunnel keys) skipped in this message
  int32_t error = 0;           // kError: the negative errno from struct nlmsgerr; kDone: a dump's final errno, if sent
  ByteRange whole;             // the whole netlink message, header included
};

// Parses every netlink message in one datagram and appends the psample, netlink control and
// generic-netlink controller ones to `out`.
// family_id: the resolved psample family; 0 accepts any family (offline decoding).
// Never reads outside [buf, buf + len); never throws. A malformed message is counted in
// stats[kMalformed] and skipped (when a header is unusable the rest of the datagram is counted as
// one malformed message); a message of another family in stats[kForeign]; skipped attributes in
// stats[kUnknownAttributes], messages in the 5.8-5.11 layout in stats[kSwappedLayout].
// Returns how many messages were appended.
size_t parse_datagram(const uint8_t* buf, size_t len, uint16_t family_id, std::vector<Message>& out, Stats& stats);

}  // namespace ovnpsample
