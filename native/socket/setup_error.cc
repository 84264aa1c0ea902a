#include "socket/setup_error.h"

#include <cstring>

namespace ovnpsample {

SetupError setup_error(const char* code, std::string message, int errnum) {
  return SetupError{code, std::move(message), errnum};
}

std::string describe_errno(const std::string& what, int errnum) {
  char buf[128];
  // GNU strerror_r may return a static string instead of filling buf.
  const char* text = strerror_r(errnum, buf, sizeof buf);
  return what + ": " + text;
}

}  // namespace ovnpsample
