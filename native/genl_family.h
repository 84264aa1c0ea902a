// Generic-netlink controller query (CTRL_CMD_GETFAMILY): build the request, read the reply.
// Pure (no system calls): the I/O is in psample_socket.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ovnpsample {

struct FamilyInfo {
  uint16_t id = 0;
  std::vector<std::pair<std::string, uint32_t>> multicast_groups;  // name, group id

  // 0 when the family has no such group.
  uint32_t group_id(const std::string& name) const;
};

std::vector<uint8_t> build_get_family_request(const std::string& family, uint32_t seq);

// Returns 0 and fills info, or a positive errno: the kernel's (ENOENT: no such family) or
// EBADMSG when the reply is not a well-formed controller answer.
int parse_get_family_reply(const uint8_t* buf, size_t len, FamilyInfo& info);

}  // namespace ovnpsample
