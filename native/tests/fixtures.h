// The real kernel captures in test/fixtures/psample, located by the directory main() was given.
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "mini_json.h"

namespace ovnpsample::testing {

inline std::string& fixture_directory() {
  static std::string directory;
  return directory;
}

inline const std::vector<std::string>& fixture_names() {
  static const std::vector<std::string> names = {"tc-cookie-1", "tc-nocookie-1", "ovs-1", "ovs-2"};
  return names;
}

inline std::optional<std::string> read_text(const std::string& path) {
  std::ifstream file(path);
  if (!file) return std::nullopt;
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

inline std::optional<std::vector<uint8_t>> decode_hex(const std::string& text) {
  std::vector<uint8_t> bytes;
  int high = -1;
  for (const char c : text) {
    int nibble;
    if (c >= '0' && c <= '9')
      nibble = c - '0';
    else if (c >= 'a' && c <= 'f')
      nibble = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      nibble = c - 'A' + 10;
    else if (c == '\n' || c == '\r' || c == ' ')
      continue;
    else
      return std::nullopt;
    if (high < 0) {
      high = nibble;
    } else {
      bytes.push_back(static_cast<uint8_t>(high << 4 | nibble));
      high = -1;
    }
  }
  if (high >= 0) return std::nullopt;
  return bytes;
}

inline std::string encode_hex(const uint8_t* bytes, size_t length) {
  static const char digits[] = "0123456789abcdef";
  std::string text;
  for (size_t i = 0; i < length; i++) text += {digits[bytes[i] >> 4], digits[bytes[i] & 15]};
  return text;
}

struct Fixture {
  std::string name;
  std::vector<uint8_t> bytes;
  JsonValue expected;
};

inline std::optional<Fixture> load_fixture(const std::string& name) {
  const std::string stem = fixture_directory() + "/" + name;
  const std::optional<std::string> hex = read_text(stem + ".hex");
  const std::optional<std::string> json = read_text(stem + ".json");
  if (!hex || !json) return std::nullopt;
  std::optional<std::vector<uint8_t>> bytes = decode_hex(*hex);
  std::optional<JsonValue> expected = JsonReader(*json).read_document();
  if (!bytes || !expected) return std::nullopt;
  return Fixture{name, std::move(*bytes), std::move(*expected)};
}

}  // namespace ovnpsample::testing
