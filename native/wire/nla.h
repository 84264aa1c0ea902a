// The netlink attribute walk (struct nlattr TLVs), shared by every parser of netlink payloads in
// the addon: psample messages (psample_parser.cc) and generic-netlink controller messages
// (genl_family.cc). Pure and header-only: no system calls, no allocation, no N-API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ovnpsample::nla {

constexpr size_t kHeaderLen = 4;        // struct nlattr: u16 nla_len, u16 nla_type
constexpr uint16_t kTypeMask = 0x3fff;  // drops NLA_F_NESTED and NLA_F_NET_BYTEORDER

constexpr size_t align4(size_t n) { return (n + 3) & ~size_t{3}; }

// memcpy because netlink offers no alignment guarantee to a byte buffer we were handed.
template <typename T>
T load_host(const uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

struct Attribute {
  uint16_t type;  // flags masked off
  const uint8_t* payload;
  size_t length;  // of the payload, without the header and the padding
};

// Calls visit(const Attribute&) -> bool for each attribute of [p, p + length), in order.
// Returns false as soon as visit does, or when a header lies about its length (shorter than a
// header, or running past the end); true once the attributes are used up.
// Like the kernel's nla_parse, it tolerates up to three bytes of trailing slack and a last
// attribute without its padding.
template <typename Visit>
bool walk(const uint8_t* p, size_t length, Visit&& visit) {
  size_t offset = 0;
  while (length - offset >= kHeaderLen) {
    const auto nla_len = load_host<uint16_t>(p + offset);
    const auto type = static_cast<uint16_t>(load_host<uint16_t>(p + offset + 2) & kTypeMask);
    if (nla_len < kHeaderLen || nla_len > length - offset) return false;
    if (!visit(Attribute{type, p + offset + kHeaderLen, size_t{nla_len} - kHeaderLen})) return false;
    const size_t step = align4(nla_len);
    if (step >= length - offset) break;
    offset += step;
  }
  return true;
}

}  // namespace ovnpsample::nla
