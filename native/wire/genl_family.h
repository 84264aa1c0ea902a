// Generic-netlink controller messages: the CTRL_CMD_GETFAMILY request and its reply, and the
// CTRL_CMD_NEWFAMILY / CTRL_CMD_DELFAMILY notifications the controller multicasts on its
// "notify" group when a family (psample: module load, unload) registers or goes away.
// Pure (no system calls): the I/O is in psample_socket.cc and reader.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ovnpsample {

struct FamilyInfo {
  uint16_t id = 0;
  std::string name;
  std::vector<std::pair<std::string, uint32_t>> multicast_groups;  // name, group id

  // 0 when the family has no such group.
  uint32_t group_id(const std::string& name) const;
};

std::vector<uint8_t> build_get_family_request(const std::string& family, uint32_t seq);

// Returns 0 and fills info, or a positive errno: the kernel's (ENOENT: no such family) or
// EBADMSG when the reply is not a well-formed controller answer.
int parse_get_family_reply(const uint8_t* buf, size_t len, FamilyInfo& info);

enum class FamilyEvent : uint8_t {
  kOther,         // any other controller message (another command, or garbled)
  kRegistered,    // CTRL_CMD_NEWFAMILY: info holds the family's id, name and groups
  kUnregistered,  // CTRL_CMD_DELFAMILY: info holds what the family was
};

// Reads one controller message [msg, msg + len) (header included, as the kernel multicasts it).
FamilyEvent parse_family_event(const uint8_t* msg, size_t len, FamilyInfo& info);

}  // namespace ovnpsample
