#include "group_filter.h"

#include <arpa/inet.h>

namespace ovnpsample {

namespace {

// struct nlmsghdr: u32 nlmsg_len, u16 nlmsg_type, ...; the generic-netlink payload starts after
// nlmsghdr (16) and genlmsghdr (4).
constexpr uint32_t kMessageTypeOffset = 4;
constexpr uint32_t kFirstAttributeOffset = 20;
constexpr uint32_t kSampleGroupAttribute = 3;
constexpr uint32_t kAcceptWholeMessage = 0xffffffff;

sock_filter statement(uint16_t code, uint32_t k) { return sock_filter{code, 0, 0, k}; }
sock_filter jump_if_equal(uint32_t k, uint8_t if_true, uint8_t if_false = 0) {
  return sock_filter{BPF_JMP | BPF_JEQ | BPF_K, if_true, if_false, k};
}

}  // namespace

std::vector<sock_filter> build_group_filter(uint16_t family_id, const std::vector<uint32_t>& groups) {
  const size_t accept_index = 9 + groups.size();
  std::vector<sock_filter> program;
  program.reserve(accept_index + 1);
  // Loads are big-endian while netlink headers and attributes are in host order: every constant
  // is compared in the form the load produces (htons / htonl).
  program.push_back(statement(BPF_LD | BPF_H | BPF_ABS, kMessageTypeOffset));
  program.push_back(jump_if_equal(htons(family_id), 0, static_cast<uint8_t>(accept_index - 2)));
  program.push_back(statement(BPF_LD | BPF_IMM, kFirstAttributeOffset));
  program.push_back(statement(BPF_LDX | BPF_IMM, kSampleGroupAttribute));
  // A = offset of the SAMPLE_GROUP attribute, or 0 when the message has none.
  program.push_back(statement(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_NLATTR));
  // A psample message without a group attribute is malformed: userspace counts it.
  // Samples and group events both carry SAMPLE_GROUP, and both are kept only for wanted groups.
  program.push_back(jump_if_equal(0, static_cast<uint8_t>(accept_index - 6)));
  program.push_back(statement(BPF_MISC | BPF_TAX, 0));
  program.push_back(statement(BPF_LD | BPF_W | BPF_IND, 4));
  for (size_t i = 0; i < groups.size(); i++) {
    const size_t index = program.size();
    program.push_back(jump_if_equal(htonl(groups[i]), static_cast<uint8_t>(accept_index - index - 1)));
  }
  program.push_back(statement(BPF_RET | BPF_K, 0));
  program.push_back(statement(BPF_RET | BPF_K, kAcceptWholeMessage));
  return program;
}

}  // namespace ovnpsample
