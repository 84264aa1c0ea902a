// A strict check of JSON text as JSON.stringify writes it (RFC 8259 without the latitude):
// no whitespace, integers only in their shortest form, strings of printable ASCII (the native
// writers never need an escape, so one is an error too), no member name twice in an object, and
// nothing after the value. For the fuzzers and tests of the native JSON writers.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ovnpsample::testing {

class StrictJson {
 public:
  // Empty when `text` is one such JSON value; otherwise what is wrong, and where.
  static std::string check(std::string_view text) {
    StrictJson parser(text);
    if (parser.value(0) && parser.at_ != text.size()) parser.fail("text after the value");
    return parser.error_;
  }

 private:
  // Deeper than any packet's JSON; bounds the recursion on hostile text.
  static constexpr int kMaxDepth = 16;

  explicit StrictJson(std::string_view text) : text_(text) {}

  bool fail(const char* what) {
    if (error_.empty()) error_ = std::string(what) + " at offset " + std::to_string(at_);
    return false;
  }

  bool peek(char c) const { return at_ < text_.size() && text_[at_] == c; }

  bool literal(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) return fail("an unknown literal");
    at_ += word.size();
    return true;
  }

  bool value(int depth) {
    if (depth > kMaxDepth) return fail("nesting too deep");
    if (at_ >= text_.size()) return fail("a value missing");
    switch (text_[at_]) {
      case '{':
        return object(depth);
      case '[':
        return array(depth);
      case '"': {
        std::string ignored;
        return string(ignored);
      }
      case 't':
        return literal("true");
      case 'f':
        return literal("false");
      case 'n':
        return literal("null");
      default:
        return number();
    }
  }

  bool object(int depth) {
    ++at_;
    std::vector<std::string> names;
    if (peek('}')) {
      ++at_;
      return true;
    }
    while (true) {
      std::string name;
      if (!peek('"')) return fail("a member name missing");
      if (!string(name)) return false;
      for (const std::string& seen : names) {
        if (seen == name) return fail("a member name twice");
      }
      names.push_back(name);
      if (!peek(':')) return fail("':' missing");
      ++at_;
      if (!value(depth + 1)) return false;
      if (peek('}')) {
        ++at_;
        return true;
      }
      if (!peek(',')) return fail("',' or '}' missing");
      ++at_;
    }
  }

  bool array(int depth) {
    ++at_;
    if (peek(']')) {
      ++at_;
      return true;
    }
    while (true) {
      if (!value(depth + 1)) return false;
      if (peek(']')) {
        ++at_;
        return true;
      }
      if (!peek(',')) return fail("',' or ']' missing");
      ++at_;
    }
  }

  bool string(std::string& out) {
    ++at_;
    while (at_ < text_.size()) {
      const char c = text_[at_];
      if (c == '"') {
        ++at_;
        return true;
      }
      if (c == '\\') return fail("an escape (the writers never need one)");
      if (c < 0x20 || c > 0x7e) return fail("a character that is no printable ASCII");
      out += c;
      ++at_;
    }
    return fail("an unterminated string");
  }

  bool digit() const { return at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9'; }

  // -?(0|[1-9][0-9]*): what JSON.stringify writes for an integer below 2^53.
  bool number() {
    if (peek('-')) ++at_;
    if (!digit()) return fail("no value starts here");
    const size_t start = at_;
    while (digit()) ++at_;
    if (text_[start] == '0' && at_ - start > 1) return fail("a number with a leading zero");
    if (at_ - start > 16) return fail("a number too long to be exact in JavaScript");
    if (peek('.') || peek('e') || peek('E')) return fail("a number that is no integer");
    return true;
  }

  std::string_view text_;
  size_t at_ = 0;
  std::string error_;
};

}  // namespace ovnpsample::testing
