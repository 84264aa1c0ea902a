// Random psample datagrams for property tests of what reads them (the group filter, the kernel
// differential test): well-formed messages with every attribute shape the kernel sends, the same
// with hostile edits, several messages in one datagram, and plain noise. Seeded and
// deterministic, so a failure names the seed that reproduces it.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "netlink_builder.h"
#include "wire/psample_parser.h"

namespace ovnpsample::testing {

class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}

  uint64_t next() {  // splitmix64
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint32_t below(uint32_t n) { return static_cast<uint32_t>(next() % n); }
  bool one_in(uint32_t n) { return below(n) == 0; }
  std::vector<uint8_t> bytes(size_t n) {
    std::vector<uint8_t> out(n);
    for (uint8_t& b : out) b = static_cast<uint8_t>(next());
    return out;
  }

 private:
  uint64_t state_;
};

// 1 to 200 groups: mostly few and small (as configured in practice), sometimes many or extreme.
inline std::vector<uint32_t> random_groups(Random& r) {
  const uint32_t count = r.one_in(8) ? 1 + r.below(200) : 1 + r.below(4);
  std::vector<uint32_t> groups;
  for (uint32_t i = 0; i < count; i++) {
    switch (r.below(4)) {
      case 0:
        groups.push_back(static_cast<uint32_t>(r.next()));
        break;
      case 1:
        groups.push_back(r.one_in(2) ? 0 : 0xffffffffu);
        break;
      default:
        groups.push_back(r.below(64));
        break;
    }
  }
  return groups;
}

// A group that is in `groups` half of the time.
inline uint32_t pick_group(Random& r, const std::vector<uint32_t>& groups) {
  if (r.one_in(2)) return groups[r.below(static_cast<uint32_t>(groups.size()))];
  return r.one_in(2) ? r.below(64) : static_cast<uint32_t>(r.next());
}

inline void add_tunnel(Random& r, NetlinkBuilder& b) {
  b.begin_nest(kAttrTunnel | (r.one_in(2) ? kNlaFNested : 0));
  if (r.one_in(2)) b.attr_big_endian<uint64_t>(kTunId, r.next());
  if (r.one_in(2)) b.attr(kTunIpv4Src, {10, 0, 0, 1}).attr(kTunIpv4Dst, {10, 0, 0, 2});
  b.attr_host<uint8_t>(kTunTtl, 64);
  if (r.one_in(3)) {
    const std::vector<uint8_t> options = r.bytes(4 * r.below(8));
    b.attr(kTunGeneveOpts, options.data(), options.size()).attr_big_endian<uint16_t>(kTunTpDst, 6081);
  }
  if (r.one_in(4)) b.begin_nest(kTunVxlanOpts).attr_host<uint32_t>(1, static_cast<uint32_t>(r.next())).end_nest();
  b.end_nest();
}

// One psample message as the kernel lays it out: every attribute once, at its width, in an
// order psample_nl_send/psample_group_notify could use, plus what later kernels may add.
inline void add_message(Random& r, NetlinkBuilder& b, uint16_t family, uint32_t group) {
  const uint8_t cmd = r.one_in(4) ? static_cast<uint8_t>(kCmdGetGroup + r.below(3)) : kCmdSample;
  b.begin_message(family, static_cast<uint16_t>(r.below(4)), static_cast<uint32_t>(r.next()), 0).genl(cmd, 1);
  // The group goes at a random place among the other attributes.
  const uint32_t attributes = r.below(12);
  const uint32_t group_at = r.below(attributes + 1);
  for (uint32_t i = 0; i <= attributes; i++) {
    if (i == group_at) b.attr_host<uint32_t>(kAttrSampleGroup | (r.one_in(8) ? kNlaFNetByteorder : 0), group);
    if (i == attributes) break;
    switch (r.below(13)) {
      case 0:
        b.attr_host<uint16_t>(kAttrIifindex, static_cast<uint16_t>(r.next()));
        break;
      case 1:
        b.attr_host<uint16_t>(kAttrOifindex, static_cast<uint16_t>(r.next()));
        break;
      case 2:
        b.attr_host<uint32_t>(kAttrOrigsize, static_cast<uint32_t>(r.next()));
        break;
      case 3:
        b.attr_host<uint32_t>(kAttrGroupSeq, static_cast<uint32_t>(r.next()));
        break;
      case 4:
        b.attr_host<uint32_t>(kAttrSampleRate, static_cast<uint32_t>(r.next()));
        break;
      case 5: {
        const std::vector<uint8_t> data = r.bytes(r.below(200));
        b.attr(kAttrData, data.data(), data.size());
        break;
      }
      case 6:
        b.attr_host<uint32_t>(kAttrGroupRefcount, r.below(4));
        break;
      case 7:
        if (cmd == kCmdSample) add_tunnel(r, b);
        break;
      case 8:
        b.attr_host<uint64_t>(kAttrTimestamp, r.next());
        break;
      case 9:
        b.attr_host<uint16_t>(kAttrProto, r.one_in(2) ? 0x0800 : 0x86dd);
        break;
      case 10: {
        const std::vector<uint8_t> cookie = r.bytes(r.one_in(2) ? 8 : 16);
        b.attr(kAttrUserCookie, cookie.data(), cookie.size());
        break;
      }
      case 11:
        b.flag(kAttrSampleProbability);
        break;
      default: {  // an attribute of a newer kernel
        const std::vector<uint8_t> payload = r.bytes(r.below(12));
        b.attr(static_cast<uint16_t>(kAttrCount + r.below(40)), payload.data(), payload.size());
        break;
      }
    }
  }
  b.end_message(!r.one_in(4));  // sometimes without the last attribute's padding
}

inline std::vector<uint8_t> well_formed_datagram(Random& r, uint16_t family, uint32_t group) {
  NetlinkBuilder b;
  add_message(r, b, family, group);
  return b.bytes();
}

// Edits a hostile sender (or a kernel bug) could make: each leaves the parser something to
// reject, or a shape it must read correctly.
inline void mutate(Random& r, std::vector<uint8_t>& d, uint16_t family, const std::vector<uint32_t>& groups) {
  auto set_length = [&d](size_t length) {
    if (d.size() >= 4) {
      const auto len = static_cast<uint32_t>(length);
      std::memcpy(d.data(), &len, sizeof len);
    }
  };
  switch (r.below(9)) {
    case 0:  // a byte anywhere
      if (!d.empty()) d[r.below(static_cast<uint32_t>(d.size()))] = static_cast<uint8_t>(r.next());
      break;
    case 1: {  // a telling value in a header or attribute length
      static const uint8_t values[] = {0, 1, 3, 4, 5, 7, 8, 0x7f, 0x80, 0xff};
      if (!d.empty()) d[r.below(static_cast<uint32_t>(d.size()))] = values[r.below(sizeof values)];
      break;
    }
    case 2:  // cut short, nlmsg_len unchanged or following
      d.resize(r.below(static_cast<uint32_t>(d.size()) + 1));
      if (r.one_in(2)) set_length(d.size());
      break;
    case 3: {  // trailing bytes, nlmsg_len unchanged or covering them
      const std::vector<uint8_t> tail = r.bytes(1 + r.below(24));
      d.insert(d.end(), tail.begin(), tail.end());
      if (r.one_in(2)) set_length(d.size());
      break;
    }
    case 4: {  // a second SAMPLE_GROUP
      NetlinkBuilder extra;
      extra.attr_host<uint32_t>(kAttrSampleGroup, pick_group(r, groups));
      d.resize((d.size() + 3) & ~size_t{3});
      d.insert(d.end(), extra.bytes().begin(), extra.bytes().end());
      set_length(d.size());
      break;
    }
    case 5: {  // a SAMPLE_GROUP too short for its u32, last
      NetlinkBuilder extra;
      const std::vector<uint8_t> short_group = r.bytes(r.below(4));
      extra.attr(kAttrSampleGroup, short_group.data(), short_group.size());
      d.resize((d.size() + 3) & ~size_t{3});
      d.insert(d.end(), extra.bytes().begin(), extra.bytes().end());
      set_length(d.size());
      break;
    }
    case 6: {  // another message after it, of any group
      NetlinkBuilder next;
      add_message(r, next, r.one_in(4) ? static_cast<uint16_t>(family + 1) : family, pick_group(r, groups));
      d.resize((d.size() + 3) & ~size_t{3});
      d.insert(d.end(), next.bytes().begin(), next.bytes().end());
      break;
    }
    case 7:  // an unknown command
      if (d.size() > 16) d[16] = static_cast<uint8_t>(4 + r.below(252));
      break;
    default:  // another message type: another family, the controller, a control message
      if (d.size() >= 6) {
        static const uint16_t types[] = {1, 2, 3, 4, 0x10, 0x11, 0xffff};
        const uint16_t type = r.one_in(2) ? types[r.below(7)] : static_cast<uint16_t>(family ^ (1u << r.below(16)));
        std::memcpy(d.data() + 4, &type, sizeof type);
      }
      break;
  }
}

// Well-formed (half of them), edited, or noise.
inline std::vector<uint8_t> random_datagram(Random& r, uint16_t family, const std::vector<uint32_t>& groups) {
  if (r.one_in(16)) return r.bytes(r.below(64));
  std::vector<uint8_t> d = well_formed_datagram(r, family, pick_group(r, groups));
  if (r.one_in(2)) {
    const uint32_t edits = 1 + r.below(3);
    for (uint32_t i = 0; i < edits; i++) mutate(r, d, family, groups);
  }
  return d;
}

}  // namespace ovnpsample::testing
