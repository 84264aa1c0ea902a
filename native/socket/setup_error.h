// A failure while opening a socket, carried from the reader thread to JavaScript.
#pragma once

#include <string>

namespace ovnpsample {

struct SetupError {
  std::string code;     // stable code mapped to a typed JavaScript error
  std::string message;  // tells the user what to do
  int errnum = 0;

  bool failed() const { return !code.empty(); }
};

SetupError setup_error(const char* code, std::string message, int errnum = 0);

// "<what>: <strerror(errnum)>", for messages that also say what to do next.
std::string describe_errno(const std::string& what, int errnum);

}  // namespace ovnpsample
