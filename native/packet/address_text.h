// MAC, IPv4 and IPv6 addresses as text, the one form for packets (packet_json.cc, packet_text.cc,
// packet_fields.cc) and psample's tunnel metadata (sample_json.cc, and PsampleSample.tunnel
// through the addon's addressText()).
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>

#include "render/decimal.h"

namespace ovnpsample {

// "ff:ff:ff:ff:ff:ff", "255.255.255.255" and "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", without a terminator.
inline constexpr size_t kMacTextBytes = 17;
inline constexpr size_t kIpv4TextMax = 15;
inline constexpr size_t kIpv6TextMax = 39;

// Lowercase, colon-separated: always kMacTextBytes at `out`.
inline void format_mac(char* out, const uint8_t* a) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < 6; i++) {
    if (i != 0) *out++ = ':';
    *out++ = kHex[a[i] >> 4];
    *out++ = kHex[a[i] & 0xf];
  }
}

// Dotted quad; returns the characters written at `out`.
inline size_t format_ipv4(char* out, const uint8_t* a) {
  char* at = out;
  for (int i = 0; i < 4; i++) {
    if (i != 0) *at++ = '.';
    at += format_decimal(at, a[i]);
  }
  return static_cast<size_t>(at - out);
}

// RFC 5952: lowercase, no leading zeros, the longest (first on a tie) run of two or more zero
// groups as "::"; IPv4-mapped addresses keep the dotted quad operators recognise (section 5).
inline size_t format_ipv6(char* out, const uint8_t* a) {
  uint32_t groups[8];
  for (int i = 0; i < 8; i++) groups[i] = uint32_t{a[2 * i]} << 8 | a[2 * i + 1];
  int best_start = -1;
  int best_length = 1;
  int run_start = -1;
  for (int group = 0; group < 8; group++) {
    if (groups[group] != 0) {
      run_start = -1;
      continue;
    }
    if (run_start < 0) run_start = group;
    if (group - run_start + 1 > best_length) {
      best_start = run_start;
      best_length = group - run_start + 1;
    }
  }
  char* at = out;
  if (best_start == 0 && best_length == 5 && groups[5] == 0xffff) {
    for (const char c : {':', ':', 'f', 'f', 'f', 'f', ':'}) *at++ = c;
    return static_cast<size_t>(at - out) + format_ipv4(at, a + 12);
  }
  bool separate = false;
  for (int group = 0; group < 8; group++) {
    if (group == best_start) {
      *at++ = ':';
      *at++ = ':';
      separate = false;
      group += best_length - 1;
      continue;
    }
    if (separate) *at++ = ':';
    at = std::to_chars(at, at + 4, groups[group], 16).ptr;
    separate = true;
  }
  return static_cast<size_t>(at - out);
}

}  // namespace ovnpsample
