// A line written straight into the caller's output buffer, the renderer's fast path: the line
// writers (sample_json.cc, sample_text.cc) write to it as they would to a std::string, so a
// line's bytes, its event's and its packet's, are copied once instead of through a scratch
// string. Under qemu/TCG, where the lab measures, every byte moved costs. A write that does not
// fit is not made and marks the line overflowed: the caller then makes room and writes it again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "render/decimal.h"

namespace ovnpsample {

class LineOut {
 public:
  LineOut(uint8_t* begin, uint8_t* end) : begin_(begin), at_(begin), end_(end) {}

  // Null, and the line overflowed, when `length` more bytes do not fit.
  char* room(size_t length) {
    if (static_cast<size_t>(end_ - at_) < length) {
      overflowed_ = true;
      at_ = end_;
      return nullptr;
    }
    return reinterpret_cast<char*>(at_);
  }
  void advance(size_t length) { at_ += length; }

  LineOut& operator+=(std::string_view text) {
    // An empty view may have no data at all (a group event's packet part): memcpy must not see it.
    if (text.empty()) return *this;
    if (char* at = room(text.size())) {
      std::memcpy(at, text.data(), text.size());
      at_ += text.size();
    }
    return *this;
  }
  // Inlined, a literal's length is known when compiled.
  LineOut& operator+=(const char* text) { return *this += std::string_view(text); }
  LineOut& operator+=(char c) {
    if (char* at = room(1)) {
      *at = c;
      at_++;
    }
    return *this;
  }

  size_t size() const { return static_cast<size_t>(at_ - begin_); }
  bool overflowed() const { return overflowed_; }

 private:
  uint8_t* begin_;
  uint8_t* at_;
  uint8_t* end_;
  bool overflowed_ = false;
};

// What the line writers write to, a std::string (appended to) or a LineOut: `length` more bytes at
// its end, already counted as written; null when they do not fit.
inline char* grow(std::string& out, size_t length) {
  const size_t at = out.size();
  out.resize(at + length);
  return out.data() + at;
}
inline char* grow(LineOut& out, size_t length) {
  char* at = out.room(length);
  if (at != nullptr) out.advance(length);
  return at;
}

// Inline, as decimal.h says why; counted first, so a number that does not fit writes nothing.
template <typename Out, typename T>
void append_number(Out& out, T value) {
  bool negative;
  const uint64_t magnitude = decimal_magnitude(value, negative);
  if (negative) out += '-';
  const unsigned length = decimal_length(magnitude);
  if (char* at = grow(out, length)) write_decimal(at, magnitude, length);
}

// The eight hex digits of four bytes (loaded little-endian), in the bytes' order once the word is
// stored little-endian. A packet's bytes are most of a line's hex: a word at a time takes about a
// quarter of the instructions of a digit at a time, and under TCG, where the lab measures,
// instructions are the cost.
inline uint64_t hex_word(uint32_t four_bytes_in_memory_order) {
  uint64_t t = four_bytes_in_memory_order;
  // Byte i of the four into the low byte of 16-bit lane i.
  t = (t | (t << 16)) & 0x0000FFFF0000FFFFull;
  t = (t | (t << 8)) & 0x00FF00FF00FF00FFull;
  // Each lane: its byte's high nibble, then its low nibble, one value 0..15 per byte.
  const uint64_t nibbles = ((t >> 4) & 0x000F000F000F000Full) | ((t & 0x000F000F000F000Full) << 8);
  // 1 in each byte whose nibble is 10..15 (n + 6 carries into bit 4; no byte overflows).
  const uint64_t letters = ((nibbles + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull;
  return nibbles + 0x3030303030303030ull + letters * ('a' - '0' - 10);
}

// Lowercase, two digits a byte.
template <typename Out>
void append_hex(Out& out, const uint8_t* bytes, size_t length) {
  static constexpr char kDigits[] = "0123456789abcdef";
  char* p = grow(out, 2 * length);
  if (p == nullptr) return;
  size_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  for (; i + 4 <= length; i += 4, p += 8) {
    uint32_t four;
    std::memcpy(&four, bytes + i, sizeof four);
    const uint64_t digits = hex_word(four);
    std::memcpy(p, &digits, sizeof digits);
  }
#endif
  for (; i < length; i++) {
    *p++ = kDigits[bytes[i] >> 4];
    *p++ = kDigits[bytes[i] & 15];
  }
}

}  // namespace ovnpsample
