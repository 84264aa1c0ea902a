// A classic-BPF interpreter with the kernel's semantics (net/core/filter.c) for socket filters on
// netlink: a load outside the packet ends the program with 0 (drop), division by zero too, and
// the SKF_AD_NLATTR ancillary load walks attributes as nla_find() does. Only what a socket filter
// may use; the program is checked first, as sk_attach_filter() would.
// The kernel itself is the reference: group_filter_kernel_test compares this with it.
#pragma once

#include <linux/filter.h>
#include <linux/netlink.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace ovnpsample::testing::cbpf {

// Why the kernel would refuse the program (bpf_check_classic), or nullopt when it would take it.
inline std::optional<std::string> check(const std::vector<sock_filter>& program) {
  if (program.empty() || program.size() > BPF_MAXINSNS) return "empty or longer than BPF_MAXINSNS";
  // check_load_and_stores(): scratch memory is read only where every path to it stored it, as a
  // walk in program order sees it (memory is unset again after a return).
  std::vector<uint16_t> valid_at(program.size(), 0xffff);
  uint16_t valid = 0;
  for (size_t pc = 0; pc < program.size(); pc++) {
    const sock_filter& i = program[pc];
    const uint16_t cls = BPF_CLASS(i.code);
    valid &= valid_at[pc];
    if (cls == BPF_ST || cls == BPF_STX) valid = static_cast<uint16_t>(valid | 1u << (i.k & 15));
    if ((cls == BPF_LD || cls == BPF_LDX) && BPF_MODE(i.code) == BPF_MEM && !(valid & 1u << (i.k & 15)))
      return "scratch memory read before it is stored at " + std::to_string(pc);
    if (cls == BPF_JMP) {
      const size_t rest = program.size() - pc - 1;
      if (BPF_OP(i.code) == BPF_JA ? i.k >= rest : (i.jt >= rest || i.jf >= rest))
        return "jump out of the program at " + std::to_string(pc);
      if (BPF_OP(i.code) == BPF_JA) {
        valid_at[pc + 1 + i.k] &= valid;
      } else {
        valid_at[pc + 1 + i.jt] &= valid;
        valid_at[pc + 1 + i.jf] &= valid;
      }
      valid = 0xffff;
    }
    if (cls == BPF_ALU && BPF_SRC(i.code) == BPF_K && (BPF_OP(i.code) == BPF_LSH || BPF_OP(i.code) == BPF_RSH) &&
        i.k >= 32)
      return "shift by 32 or more at " + std::to_string(pc);
  }
  for (size_t pc = 0; pc < program.size(); pc++) {
    const sock_filter& i = program[pc];
    const uint16_t cls = BPF_CLASS(i.code);
    if ((cls == BPF_ST || cls == BPF_STX || ((cls == BPF_LD || cls == BPF_LDX) && BPF_MODE(i.code) == BPF_MEM)) &&
        i.k >= BPF_MEMWORDS)
      return "scratch memory index out of range at " + std::to_string(pc);
    if (cls == BPF_ALU && BPF_SRC(i.code) == BPF_K && (BPF_OP(i.code) == BPF_DIV || BPF_OP(i.code) == BPF_MOD) &&
        i.k == 0)
      return "division by constant zero at " + std::to_string(pc);
  }
  if (BPF_CLASS(program.back().code) != BPF_RET) return "the last instruction is not a return";
  return std::nullopt;
}

namespace detail {

inline uint16_t host16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// nla_find(head, len, type) with nla_ok()/nla_next(): the offset of the attribute from `p`'s
// packet start, or 0.
inline uint32_t nla_find(const uint8_t* packet, uint32_t start, uint32_t length, uint32_t type) {
  int64_t rem = length;
  uint32_t at = start;
  while (rem >= 4) {
    const uint16_t nla_len = host16(packet + at);
    if (nla_len < 4 || nla_len > rem) break;
    if ((host16(packet + at + 2) & NLA_TYPE_MASK) == type) return at;
    const uint32_t step = (nla_len + 3u) & ~3u;
    rem -= step;
    at += step;
  }
  return 0;
}

// bpf_skb_get_nlattr() on a linear skb.
inline uint32_t nlattr(const uint8_t* packet, uint32_t len, uint32_t a, uint32_t x) {
  if (len < 4 || a > len - 4) return 0;
  return nla_find(packet, a, len - a, x);
}

}  // namespace detail

struct Unsupported {
  std::string what;
};

// The filter's verdict: 0 drops the message, anything else keeps that many bytes of it.
// Throws Unsupported for an instruction a psample filter has no use for.
inline uint32_t run(const std::vector<sock_filter>& program, const uint8_t* packet, uint32_t len) {
  uint32_t a = 0;
  uint32_t x = 0;
  uint32_t mem[BPF_MEMWORDS] = {};
  auto load = [&](uint32_t offset, uint32_t width, uint32_t& out) {
    if (offset > len || width > len - offset) return false;
    out = 0;
    for (uint32_t i = 0; i < width; i++) out = out << 8 | packet[offset + i];  // network order
    return true;
  };
  for (size_t pc = 0; pc < program.size(); pc++) {
    const sock_filter& i = program[pc];
    const uint32_t src = BPF_SRC(i.code) == BPF_X ? x : i.k;
    const uint32_t width = BPF_SIZE(i.code) == BPF_W ? 4 : BPF_SIZE(i.code) == BPF_H ? 2 : 1;
    switch (BPF_CLASS(i.code)) {
      case BPF_LD:
        switch (BPF_MODE(i.code)) {
          case BPF_IMM:
            a = i.k;
            break;
          case BPF_LEN:
            a = len;
            break;
          case BPF_MEM:
            a = mem[i.k];
            break;
          case BPF_ABS:
            if (static_cast<int32_t>(i.k) < 0) {
              if (i.k != static_cast<uint32_t>(SKF_AD_OFF + SKF_AD_NLATTR) || width != 4)
                throw Unsupported{"ancillary load " + std::to_string(static_cast<int32_t>(i.k))};
              a = detail::nlattr(packet, len, a, x);
            } else if (!load(i.k, width, a)) {
              return 0;
            }
            break;
          case BPF_IND: {
            const uint64_t offset = uint64_t{x} + i.k;  // one that wraps past 2^31 is negative: no packet byte
            if (offset > INT32_MAX || !load(static_cast<uint32_t>(offset), width, a)) return 0;
            break;
          }
          default:
            throw Unsupported{"load mode " + std::to_string(BPF_MODE(i.code))};
        }
        break;
      case BPF_LDX:
        switch (BPF_MODE(i.code)) {
          case BPF_IMM:
            x = i.k;
            break;
          case BPF_LEN:
            x = len;
            break;
          case BPF_MEM:
            x = mem[i.k];
            break;
          case BPF_MSH: {
            uint32_t byte;
            if (!load(i.k, 1, byte)) return 0;
            x = (byte & 0xf) * 4;
            break;
          }
          default:
            throw Unsupported{"ldx mode " + std::to_string(BPF_MODE(i.code))};
        }
        break;
      case BPF_ST:
        mem[i.k] = a;
        break;
      case BPF_STX:
        mem[i.k] = x;
        break;
      case BPF_ALU:
        switch (BPF_OP(i.code)) {
          case BPF_ADD:
            a += src;
            break;
          case BPF_SUB:
            a -= src;
            break;
          case BPF_MUL:
            a *= src;
            break;
          case BPF_DIV:
            if (src == 0) return 0;
            a /= src;
            break;
          case BPF_MOD:
            if (src == 0) return 0;
            a %= src;
            break;
          case BPF_AND:
            a &= src;
            break;
          case BPF_OR:
            a |= src;
            break;
          case BPF_XOR:
            a ^= src;
            break;
          case BPF_LSH:
            a = src >= 32 ? 0 : a << src;
            break;
          case BPF_RSH:
            a = src >= 32 ? 0 : a >> src;
            break;
          case BPF_NEG:
            a = 0 - a;
            break;
          default:
            throw Unsupported{"alu op " + std::to_string(BPF_OP(i.code))};
        }
        break;
      case BPF_JMP:
        switch (BPF_OP(i.code)) {
          case BPF_JA:
            pc += i.k;
            break;
          case BPF_JEQ:
            pc += a == src ? i.jt : i.jf;
            break;
          case BPF_JGT:
            pc += a > src ? i.jt : i.jf;
            break;
          case BPF_JGE:
            pc += a >= src ? i.jt : i.jf;
            break;
          case BPF_JSET:
            pc += (a & src) != 0 ? i.jt : i.jf;
            break;
          default:
            throw Unsupported{"jump op " + std::to_string(BPF_OP(i.code))};
        }
        break;
      case BPF_RET:
        return BPF_RVAL(i.code) == BPF_A ? a : i.k;
      case BPF_MISC:
        if (BPF_MISCOP(i.code) == BPF_TAX)
          x = a;
        else
          a = x;
        break;
      default:
        throw Unsupported{"class " + std::to_string(BPF_CLASS(i.code))};
    }
  }
  throw Unsupported{"ran off the end of the program"};
}

}  // namespace ovnpsample::testing::cbpf
