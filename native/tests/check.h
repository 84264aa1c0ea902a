// The smallest harness that lets ctest tell which expectation failed, without a test framework
// dependency that would have to be fetched (the build must work offline).
#pragma once

#include <cstdint>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace ovnpsample::testing {

struct TestCase {
  const char* name;
  std::function<void()> body;
};

inline std::vector<TestCase>& registry() {
  static std::vector<TestCase> cases;
  return cases;
}

inline int& current_failures() {
  static int failures = 0;
  return failures;
}

struct Registrar {
  Registrar(const char* name, std::function<void()> body) { registry().push_back({name, std::move(body)}); }
};

// uint8_t would print as a character; every integer is shown as a number.
template <typename T>
std::string show(const T& value) {
  std::ostringstream text;
  if constexpr (std::is_integral_v<T>) {
    text << +value;
  } else {
    text << value;
  }
  return text.str();
}

template <typename A, typename B>
bool expect_equal(const A& actual, const B& expected, const char* actual_text, const char* file, int line) {
  if (actual == expected) return true;
  ++current_failures();
  std::cerr << file << ":" << line << ": expected " << actual_text << " == " << show(expected) << ", got "
            << show(actual) << "\n";
  return false;
}

inline bool expect_true(bool condition, const char* text, const char* file, int line) {
  if (condition) return true;
  ++current_failures();
  std::cerr << file << ":" << line << ": expected " << text << "\n";
  return false;
}

}  // namespace ovnpsample::testing

#define OVNPS_CONCAT_INNER(a, b) a##b
#define OVNPS_CONCAT(a, b) OVNPS_CONCAT_INNER(a, b)
#define TEST_CASE(name)                                                                  \
  static void OVNPS_CONCAT(test_body_, __LINE__)();                                      \
  static const ::ovnpsample::testing::Registrar OVNPS_CONCAT(test_registrar_, __LINE__)( \
      name, OVNPS_CONCAT(test_body_, __LINE__));                                         \
  static void OVNPS_CONCAT(test_body_, __LINE__)()
#define CHECK_EQ(actual, expected) \
  ::ovnpsample::testing::expect_equal((actual), (expected), #actual, __FILE__, __LINE__)
#define CHECK(condition) ::ovnpsample::testing::expect_true((condition), #condition, __FILE__, __LINE__)
