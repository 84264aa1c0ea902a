// Writes netlink datagrams byte by byte, in the kernel's layout, so each test states the exact
// wire shape it feeds the parser (including shapes a correct kernel never sends).
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

namespace ovnpsample::testing {

constexpr uint16_t kPsampleFamily = 34;  // the id Debian's 6.12 kernel gave psample in the captures
constexpr uint16_t kNlaFNested = 0x8000;
constexpr uint16_t kNlaFNetByteorder = 0x4000;

class NetlinkBuilder {
 public:
  NetlinkBuilder& begin_message(uint16_t type, uint16_t flags = 0, uint32_t seq = 0, uint32_t pid = 0) {
    pad();
    message_start_ = bytes_.size();
    put_host<uint32_t>(0);
    put_host(type);
    put_host(flags);
    put_host(seq);
    put_host(pid);
    return *this;
  }

  NetlinkBuilder& genl(uint8_t cmd, uint8_t version = 1) {
    bytes_.insert(bytes_.end(), {cmd, version, 0, 0});
    return *this;
  }

  NetlinkBuilder& attr(uint16_t type, const void* payload, size_t length) {
    pad();
    put_host(static_cast<uint16_t>(4 + length));
    put_host(type);
    const auto* first = static_cast<const uint8_t*>(payload);
    bytes_.insert(bytes_.end(), first, first + length);
    return *this;
  }

  NetlinkBuilder& attr(uint16_t type, std::initializer_list<uint8_t> payload) {
    return attr(type, payload.begin(), payload.size());
  }

  template <typename T>
  NetlinkBuilder& attr_host(uint16_t type, T value) {
    return attr(type, &value, sizeof value);
  }

  template <typename T>
  NetlinkBuilder& attr_big_endian(uint16_t type, T value) {
    uint8_t payload[sizeof(T)];
    for (size_t i = 0; i < sizeof(T); ++i) payload[i] = static_cast<uint8_t>(value >> (8 * (sizeof(T) - 1 - i)));
    return attr(type, payload, sizeof payload);
  }

  NetlinkBuilder& flag(uint16_t type) { return attr(type, nullptr, 0); }

  NetlinkBuilder& begin_nest(uint16_t type) {
    pad();
    nests_.push_back(bytes_.size());
    put_host<uint16_t>(0);
    put_host(type);
    return *this;
  }

  // Like nla_nest_end, the nest's length covers its last attribute's padding.
  NetlinkBuilder& end_nest() {
    pad();
    const size_t start = nests_.back();
    nests_.pop_back();
    write_host(start, static_cast<uint16_t>(bytes_.size() - start));
    return *this;
  }

  // The kernel counts the last attribute's padding in nlmsg_len; `pad_last = false` builds the
  // shape the parser must also accept, where the message ends right after the last payload byte.
  NetlinkBuilder& end_message(bool pad_last = true) {
    if (pad_last) pad();
    write_host(message_start_, static_cast<uint32_t>(bytes_.size() - message_start_));
    return *this;
  }

  NetlinkBuilder& raw(std::initializer_list<uint8_t> payload) {
    bytes_.insert(bytes_.end(), payload);
    return *this;
  }

  template <typename T>
  NetlinkBuilder& raw_host(T value) {
    put_host(value);
    return *this;
  }

  size_t size() const { return bytes_.size(); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  void pad() {
    while (bytes_.size() % 4 != 0) bytes_.push_back(0);
  }

  template <typename T>
  void put_host(T value) {
    const auto* first = reinterpret_cast<const uint8_t*>(&value);
    bytes_.insert(bytes_.end(), first, first + sizeof value);
  }

  template <typename T>
  void write_host(size_t offset, T value) {
    std::memcpy(bytes_.data() + offset, &value, sizeof value);
  }

  std::vector<uint8_t> bytes_;
  std::vector<size_t> nests_;
  size_t message_start_ = 0;
};

}  // namespace ovnpsample::testing
