// Runs every registered parser test. Usage: psample_parser_tests FIXTURE_DIR
// (FIXTURE_DIR holds the real captures, test/fixtures/psample).
#include <cstdio>

#include "check.h"
#include "fixtures.h"

int main(int argc, char** argv) {
  using namespace ovnpsample::testing;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FIXTURE_DIR (the project's test/fixtures/psample)\n", argv[0]);
    return 2;
  }
  fixture_directory() = argv[1];
  int passed = 0;
  int failed = 0;
  for (const TestCase& test : registry()) {
    const int before = current_failures();
    test.body();
    const bool ok = current_failures() == before;
    std::printf("%s %s\n", ok ? "ok  " : "FAIL", test.name);
    ++(ok ? passed : failed);
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
