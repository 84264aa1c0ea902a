// Decimal digits of an integer, written in place. A line has a dozen numbers or more and a packet's
// JSON as many again: written inline, two digits at a time from a table and the length counted
// first, they cost no call. Under TCG, where the lab measures, each call and return is an indirect
// jump the emulator looks up, and std::to_chars makes three of them per number.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace ovnpsample {

// "00" "01" … "99".
inline constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// The longest a decimal number of any integer type up to 64 bits takes, its sign included.
inline constexpr unsigned kMaxDecimalLength = 20;

inline unsigned decimal_length(uint64_t value) {
  unsigned length = 1;
  for (uint64_t bound = 10; value >= bound; bound *= 10) {
    if (++length == 20) break;  // 10^19 is the last power of ten a uint64_t holds
  }
  return length;
}

// Writes the decimal_length(value) digits of `value` at `at`.
inline void write_decimal(char* at, uint64_t value, unsigned length) {
  char* p = at + length;
  while (value >= 100) {
    p -= 2;
    std::memcpy(p, kDigitPairs + 2 * (value % 100), 2);
    value /= 100;
  }
  if (value >= 10) {
    std::memcpy(p - 2, kDigitPairs + 2 * value, 2);
  } else {
    p[-1] = static_cast<char>('0' + value);
  }
}

// The digits' value of `value`, and whether a '-' goes before them.
template <typename T>
inline uint64_t decimal_magnitude(T value, bool& negative) {
  static_assert(std::is_integral_v<T> && sizeof(T) <= sizeof(uint64_t));
  negative = false;
  if constexpr (std::is_signed_v<T>) negative = value < 0;
  // Two's complement: 0 - value is the magnitude even for the type's minimum.
  return negative ? uint64_t{0} - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
}

// Writes `value` at `at` (room for kMaxDecimalLength); returns the characters written.
template <typename T>
inline unsigned format_decimal(char* at, T value) {
  bool negative;
  const uint64_t magnitude = decimal_magnitude(value, negative);
  if (negative) *at++ = '-';
  const unsigned length = decimal_length(magnitude);
  write_decimal(at, magnitude, length);
  return (negative ? 1 : 0) + length;
}

}  // namespace ovnpsample
