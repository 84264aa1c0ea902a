// libFuzzer target: any byte string is a reply to CTRL_CMD_GETFAMILY or a controller notification
// (NEWFAMILY / DELFAMILY) the socket reads. Beyond ASan/UBSan's checks, it traps when a parse
// that succeeds yields what the socket could not use (family id 0, an unnamed group or group id
// 0, a name longer than the input), or when the two entry points read the same message apart.
#include <cstddef>
#include <cstdint>

#include "wire/genl_family.h"

namespace {

using ovnpsample::FamilyEvent;
using ovnpsample::FamilyInfo;

void check_usable(const FamilyInfo& info, size_t size) {
  if (info.id == 0 || info.name.size() > size) __builtin_trap();
  for (const auto& [name, id] : info.multicast_groups) {
    if (name.empty() || id == 0 || name.size() > size) __builtin_trap();
    if (info.group_id(name) == 0) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FamilyInfo reply;
  const int err = ovnpsample::parse_get_family_reply(data, size, reply);
  if (err < 0) __builtin_trap();  // a positive errno or 0
  if (err == 0) check_usable(reply, size);

  FamilyInfo event;
  if (ovnpsample::parse_family_event(data, size, event) == FamilyEvent::kOther) return 0;
  check_usable(event, size);
  // A notification carries a reply's attributes under another command: both read them alike.
  if (err != 0 || reply.id != event.id || reply.name != event.name || reply.multicast_groups != event.multicast_groups)
    __builtin_trap();
  return 0;
}
