#include "socket/group_filter.h"

#include <arpa/inet.h>

#include <algorithm>

namespace ovnpsample {

namespace {

// struct nlmsghdr: u32 nlmsg_len, u16 nlmsg_type, ...; the generic-netlink payload starts after
// nlmsghdr (16) and genlmsghdr (4: cmd first).
constexpr uint32_t kMessageTypeOffset = 4;
constexpr uint32_t kCommandOffset = 16;
constexpr uint32_t kFirstAttributeOffset = 20;
constexpr uint32_t kLastKnownCommand = 3;  // PSAMPLE_CMD_DEL_GROUP
constexpr uint32_t kSampleGroupAttribute = 3;
constexpr uint32_t kAcceptWholeMessage = 0xffffffff;
// Scratch memory words.
constexpr uint32_t kGroupAttributeOffset = 0;
constexpr uint32_t kHighByteShifted = 1;

// Where byte `significance` (0 = least significant) of a host-order integer `width` bytes wide is.
constexpr uint32_t byte_at(uint32_t significance, uint32_t width) {
  return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? significance : width - 1 - significance;
}

sock_filter statement(uint16_t code, uint32_t k) { return sock_filter{code, 0, 0, k}; }

// Builds the program with jumps named by label, resolved once every label's place is known.
class Program {
 public:
  enum Label { kNext, kPass, kCompareGroups, kKeep };

  void add(uint16_t code, uint32_t k) { code_.push_back(statement(code, k)); }
  // if (A <op> k) goto if_true; else goto if_false
  void jump(uint16_t op, uint32_t k, Label if_true, Label if_false) {
    add_jump(BPF_JMP | op | BPF_K, k, if_true, if_false);
  }
  // if (A <op> X) goto if_true; else goto if_false
  void jump_x(uint16_t op, Label if_true, Label if_false) { add_jump(BPF_JMP | op | BPF_X, 0, if_true, if_false); }
  // goto label (32-bit offset)
  void go_to(Label label) { add_jump(BPF_JMP | BPF_JA, 0, label, kNext); }
  void place(Label label) { places_[label] = code_.size(); }

  std::vector<sock_filter> finish() {
    for (const Jump& j : jumps_) {
      sock_filter& i = code_[j.at];
      if (BPF_OP(i.code) == BPF_JA) {
        i.k = static_cast<uint32_t>(places_[j.if_true] - j.at - 1);
        continue;
      }
      i.jt = offset(j.at, j.if_true);
      i.jf = offset(j.at, j.if_false);
    }
    return std::move(code_);
  }

 private:
  void add_jump(int code, uint32_t k, Label if_true, Label if_false) {
    jumps_.push_back({code_.size(), if_true, if_false});
    code_.push_back(statement(static_cast<uint16_t>(code), k));
  }

  struct Jump {
    size_t at;
    Label if_true;
    Label if_false;
  };
  uint8_t offset(size_t from, Label to) const { return to == kNext ? 0 : static_cast<uint8_t>(places_[to] - from - 1); }
  std::vector<sock_filter> code_;
  std::vector<Jump> jumps_;
  size_t places_[4] = {};
};

}  // namespace

std::vector<sock_filter> build_group_filter(uint16_t family_id, const std::vector<uint32_t>& groups) {
  using L = Program::Label;
  Program p;
  // Loads are big-endian while netlink headers and attributes are in host order: constants are
  // compared in the form the load produces (htons / htonl), and host-order lengths are put
  // together byte by byte.
  // 1. At least the two headers, of the family.
  p.add(BPF_LD | BPF_W | BPF_LEN, 0);
  p.jump(BPF_JGE, kFirstAttributeOffset, L::kNext, L::kPass);
  p.add(BPF_LD | BPF_H | BPF_ABS, kMessageTypeOffset);
  p.jump(BPF_JEQ, htons(family_id), L::kNext, L::kPass);
  // 2. One message, filling the datagram: X = nlmsg_len, compared with the datagram's length.
  // Several messages in one datagram (never sent by the kernel) are left to userspace.
  p.add(BPF_LD | BPF_B | BPF_ABS, byte_at(3, 4));
  for (uint32_t significance = 3; significance-- > 0;) {
    p.add(BPF_ALU | BPF_LSH | BPF_K, 8);
    p.add(BPF_MISC | BPF_TAX, 0);
    p.add(BPF_LD | BPF_B | BPF_ABS, byte_at(significance, 4));
    p.add(BPF_ALU | BPF_OR | BPF_X, 0);
  }
  p.add(BPF_MISC | BPF_TAX, 0);
  p.add(BPF_LD | BPF_W | BPF_LEN, 0);
  p.jump_x(BPF_JEQ, L::kNext, L::kPass);
  // 3. A command the parser knows (a sample or a group event).
  p.add(BPF_LD | BPF_B | BPF_ABS, kCommandOffset);
  p.jump(BPF_JGT, kLastKnownCommand, L::kPass, L::kNext);
  // 4. A = offset of the first SAMPLE_GROUP attribute (the kernel walks the attributes), 0: none.
  p.add(BPF_LD | BPF_IMM, kFirstAttributeOffset);
  p.add(BPF_LDX | BPF_IMM, kSampleGroupAttribute);
  p.add(BPF_LD | BPF_W | BPF_ABS, static_cast<uint32_t>(SKF_AD_OFF + SKF_AD_NLATTR));
  p.jump(BPF_JEQ, 0, L::kPass, L::kNext);
  // 5. Its payload holds a u32: nla_len >= 8.
  p.add(BPF_ST, kGroupAttributeOffset);
  p.add(BPF_MISC | BPF_TAX, 0);
  p.add(BPF_LD | BPF_B | BPF_IND, byte_at(1, 2));
  p.add(BPF_ALU | BPF_LSH | BPF_K, 8);
  p.add(BPF_ST, kHighByteShifted);
  p.add(BPF_LD | BPF_B | BPF_IND, byte_at(0, 2));
  p.add(BPF_LDX | BPF_MEM, kHighByteShifted);
  p.add(BPF_ALU | BPF_OR | BPF_X, 0);
  p.jump(BPF_JGE, 8, L::kNext, L::kPass);
  // 6. No second SAMPLE_GROUP after it (userspace calls such a message malformed).
  // NOLINTNEXTLINE(misc-redundant-expression): BPF_ADD and BPF_K are both 0, spelled out as the instruction reads.
  p.add(BPF_ALU | BPF_ADD | BPF_K, 3);
  p.add(BPF_ALU | BPF_AND | BPF_K, ~uint32_t{3});
  p.add(BPF_LDX | BPF_MEM, kGroupAttributeOffset);
  p.add(BPF_ALU | BPF_ADD | BPF_X, 0);
  p.add(BPF_LDX | BPF_IMM, kSampleGroupAttribute);
  p.add(BPF_LD | BPF_W | BPF_ABS, static_cast<uint32_t>(SKF_AD_OFF + SKF_AD_NLATTR));
  p.jump(BPF_JEQ, 0, L::kNext, L::kPass);
  // 7. A = the group.
  p.add(BPF_LDX | BPF_MEM, kGroupAttributeOffset);
  p.add(BPF_LD | BPF_W | BPF_IND, 4);
  p.go_to(L::kCompareGroups);
  // Every check above that fails lands here, near enough for an 8-bit jump whatever the groups.
  // (Nothing after it reads scratch memory: the kernel's check of loads and stores walks the
  // program in order and would count that memory as unset past a return.)
  p.place(L::kPass);
  p.add(BPF_RET | BPF_K, kAcceptWholeMessage);
  // 8. The group against each wanted one.
  p.place(L::kCompareGroups);
  for (const uint32_t group : groups) p.jump(BPF_JEQ, htonl(group), L::kKeep, L::kNext);
  p.add(BPF_RET | BPF_K, 0);
  p.place(L::kKeep);
  p.add(BPF_RET | BPF_K, kAcceptWholeMessage);
  return p.finish();
}

bool group_wanted(const std::vector<uint32_t>& groups, uint32_t group) {
  return groups.empty() || std::find(groups.begin(), groups.end(), group) != groups.end();
}

}  // namespace ovnpsample
