// libFuzzer target: any byte string is a datagram the kernel (or an attacker on the netlink bus)
// might hand the reader. Beyond ASan/UBSan's checks, it traps when a decoded range escapes the input
// or when the returned count disagrees with what was appended.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "wire/psample_parser.h"

namespace {

bool inside(const ovnpsample::ByteRange& range, size_t size) {
  return range.offset <= size && range.length <= size - range.offset;
}

void parse_and_check(const uint8_t* data, size_t size, uint16_t family_id) {
  std::vector<ovnpsample::Message> messages;
  ovnpsample::Stats counters{};
  const size_t appended = ovnpsample::parse_datagram(data, size, family_id, messages, counters);
  if (appended != messages.size()) __builtin_trap();
  for (const ovnpsample::Message& m : messages) {
    if (!inside(m.whole, size) || !inside(m.data, size) || !inside(m.user_cookie, size) ||
        !inside(m.tunnel.geneve_opts, size) || !inside(m.tunnel.erspan_opts, size)) {
      __builtin_trap();
    }
    const bool event = m.kind == ovnpsample::MessageKind::kSample || m.kind == ovnpsample::MessageKind::kGroup;
    if (event && !(m.present & (1u << ovnpsample::kAttrSampleGroup))) {
      __builtin_trap();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  parse_and_check(data, size, 0);
  parse_and_check(data, size, 34);
  return 0;
}
