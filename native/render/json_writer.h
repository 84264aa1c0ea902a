// Appends JSON text (and the packet's one-line description) to a std::string piece by piece,
// inline: literals are copied with their length known at compile time and the room is checked
// once per piece, where std::string::append would call out of line for every few bytes. Text is
// ASCII; the caller writes the syntax.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstring>
#include <string>

#include "render/decimal.h"

namespace ovnpsample {

class JsonWriter {
 public:
  // Enough for most packets' JSON at once: the string grows (doubling) only for longer ones.
  static constexpr size_t kInitialRoom = 768;

  explicit JsonWriter(std::string& out) : out_(out), used_(out.size()) { out_.resize(used_ + kInitialRoom); }
  // Gives the string back at the length written.
  ~JsonWriter() { out_.resize(used_); }
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  template <size_t N>
  void literal(const char (&text)[N]) {
    std::memcpy(room(N - 1), text, N - 1);
    used_ += N - 1;
  }

  void text(const char* text) {
    const size_t length = std::strlen(text);
    std::memcpy(room(length), text, length);
    used_ += length;
  }

  void character(char c) {
    *room(1) = c;
    used_++;
  }

  void boolean(bool value) {
    if (value)
      literal("true");
    else
      literal("false");
  }

  template <typename Integer>
  void number(Integer value, int base = 10) {
    constexpr size_t kMaxDigits = 20;
    char* at = room(kMaxDigits);
    used_ += base == 10 ? format_decimal(at, value)
                        : static_cast<size_t>(std::to_chars(at, at + kMaxDigits, value, base).ptr - at);
  }

  // `length` bytes written straight into place (at most `length`; written() says how many).
  char* raw(size_t length) { return room(length); }
  void written(size_t length) { used_ += length; }

 private:
  char* room(size_t length) {
    if (out_.size() - used_ < length) out_.resize(std::max(out_.size() * 2, used_ + length));
    return &out_[used_];
  }

  std::string& out_;
  size_t used_;
};

}  // namespace ovnpsample
