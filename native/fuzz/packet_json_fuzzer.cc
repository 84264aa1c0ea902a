// libFuzzer target: the sampled packet's decoder, JSON writer (../packet_json.h) and description
// (../packet_text.h) over any bytes and any PROTO. Input: PROTO (2 bytes, big-endian), then the sampled data, which
// ends where the input does (so ASan sees a read past it). Beyond ASan/UBSan's checks, it traps when the text is not
// strict JSON as JSON.stringify writes it (../tests/strict_json.h), when its length or truncation members contradict
// the input, or when appending to a non-empty string touches what was there or writes something else; and when the
// description is not one line of printable ASCII, does not tell the truncation the JSON tells, or appends differently.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "../tests/strict_json.h"
#include "packet/packet_json.h"
#include "packet/packet_text.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& json) {
  std::fprintf(stderr, "packet_json: %s\n%s\n", what, json.c_str());
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t size) {
  if (size < 2) return 0;
  const auto proto = static_cast<uint16_t>(input[0] << 8 | input[1]);
  const uint8_t* data = input + 2;
  const size_t length = size - 2;

  std::string json;
  ovnpsample::append_packet_json(json, data, length, proto);
  if (const std::string error = ovnpsample::testing::StrictJson::check(json); !error.empty()) fail(error.c_str(), json);
  if (json.rfind("{\"link\":\"", 0) != 0) fail("the link is not the first member", json);
  if (json.find(",\"length\":" + std::to_string(length) + ",\"etherType\":") == std::string::npos)
    fail("the length is not the data's", json);
  const bool truncated = json.find(",\"truncated\":true") != std::string::npos;
  if (truncated != (json.find(",\"truncatedLayer\":\"") != std::string::npos))
    fail("truncated and truncatedLayer disagree", json);

  std::string appended = "{\"packet\":";
  ovnpsample::append_packet_json(appended, data, length, proto);
  if (appended.compare(0, 10, "{\"packet\":") != 0 || appended.compare(10, std::string::npos, json) != 0) {
    fail("appending to a string wrote something else", appended);
  }

  std::string text;
  ovnpsample::append_packet_text(text, data, length, proto);
  if (text.empty()) fail("an empty description", json);
  for (const char c : text) {
    if (c < 0x20 || c > 0x7e) fail("the description holds a byte that is not printable ASCII", text);
  }
  if (truncated != (text.find(" truncated in ") != std::string::npos))
    fail("the description and the JSON disagree on truncation", text);
  // Every description but ARP's says the length.
  if (text.find("ARP ") == std::string::npos && text.find(" len=" + std::to_string(length)) == std::string::npos)
    fail("the description has not the data's length", text);
  std::string described = "sample ";
  ovnpsample::append_packet_text(described, data, length, proto);
  if (described.compare(0, 7, "sample ") != 0 || described.compare(7, std::string::npos, text) != 0) {
    fail("appending a description to a string wrote something else", described);
  }
  return 0;
}
