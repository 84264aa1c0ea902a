// Just enough JSON to read the fixtures' .json files (objects, strings, numbers, booleans),
// because the tests must build offline with nothing but the compiler.
#pragma once

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ovnpsample::testing {

struct JsonValue {
  enum class Kind : uint8_t { kObject, kString, kNumber, kBool, kNull };
  Kind kind = Kind::kNull;
  std::string text;  // a string's characters, or a number's literal (kept whole: it may exceed 2^53)
  bool boolean = false;
  std::vector<std::pair<std::string, JsonValue>> members;

  const JsonValue* find(const std::string& key) const {
    for (const auto& member : members) {
      if (member.first == key) return &member.second;
    }
    return nullptr;
  }

  uint64_t as_unsigned() const { return std::strtoull(text.c_str(), nullptr, 10); }
};

class JsonReader {
 public:
  explicit JsonReader(const std::string& text) : text_(text) {}

  std::optional<JsonValue> read_document() {
    std::optional<JsonValue> value = read_value();
    skip_space();
    if (!value || position_ != text_.size()) return std::nullopt;
    return value;
  }

 private:
  std::optional<JsonValue> read_value() {
    skip_space();
    if (position_ >= text_.size()) return std::nullopt;
    const char c = text_[position_];
    if (c == '{') return read_object();
    if (c == '"') return read_string_value();
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) return read_number();
    JsonValue value;
    if (consume("true")) {
      value.kind = JsonValue::Kind::kBool;
      value.boolean = true;
      return value;
    }
    if (consume("false")) {
      value.kind = JsonValue::Kind::kBool;
      return value;
    }
    if (consume("null")) return value;
    return std::nullopt;
  }

  std::optional<JsonValue> read_object() {
    JsonValue object;
    object.kind = JsonValue::Kind::kObject;
    ++position_;
    skip_space();
    if (consume("}")) return object;
    while (true) {
      skip_space();
      std::optional<std::string> key = read_string();
      skip_space();
      if (!key || !consume(":")) return std::nullopt;
      std::optional<JsonValue> value = read_value();
      if (!value) return std::nullopt;
      object.members.emplace_back(std::move(*key), std::move(*value));
      skip_space();
      if (consume("}")) return object;
      if (!consume(",")) return std::nullopt;
    }
  }

  std::optional<JsonValue> read_string_value() {
    std::optional<std::string> text = read_string();
    if (!text) return std::nullopt;
    JsonValue value;
    value.kind = JsonValue::Kind::kString;
    value.text = std::move(*text);
    return value;
  }

  // The fixtures hold no escapes; one is refused rather than decoded wrongly.
  std::optional<std::string> read_string() {
    if (!consume("\"")) return std::nullopt;
    const size_t end = text_.find('"', position_);
    if (end == std::string::npos) return std::nullopt;
    std::string text = text_.substr(position_, end - position_);
    if (text.find('\\') != std::string::npos) return std::nullopt;
    position_ = end + 1;
    return text;
  }

  std::optional<JsonValue> read_number() {
    const size_t start = position_;
    if (text_[position_] == '-') ++position_;
    while (position_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[position_]))) ++position_;
    JsonValue value;
    value.kind = JsonValue::Kind::kNumber;
    value.text = text_.substr(start, position_ - start);
    return value;
  }

  bool consume(const char* token) {
    const std::string expected(token);
    if (text_.compare(position_, expected.size(), expected) != 0) return false;
    position_ += expected.size();
    return true;
  }

  void skip_space() {
    while (position_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[position_]))) ++position_;
  }

  const std::string& text_;
  size_t position_ = 0;
};

}  // namespace ovnpsample::testing
