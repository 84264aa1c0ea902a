#include "wire/genl_family.h"

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include "wire/nla.h"

namespace ovnpsample {

namespace {

using nla::align4;
using nla::load_host;

std::string string_of(const nla::Attribute& a) {
  const auto* text = reinterpret_cast<const char*>(a.payload);
  return std::string(text, strnlen(text, a.length));
}

bool parse_multicast_group(const uint8_t* p, size_t len, FamilyInfo& info) {
  std::string name;
  uint32_t id = 0;
  bool ok = nla::walk(p, len, [&](const nla::Attribute& a) {
    if (a.type == CTRL_ATTR_MCAST_GRP_NAME) name = string_of(a);
    if (a.type == CTRL_ATTR_MCAST_GRP_ID && a.length >= 4) id = load_host<uint32_t>(a.payload);
    return true;
  });
  if (ok && !name.empty() && id != 0) info.multicast_groups.emplace_back(name, id);
  return ok;
}

// The attributes ctrl_fill_info() writes, for a GETFAMILY reply and for NEWFAMILY/DELFAMILY alike.
bool parse_family_attributes(const uint8_t* p, size_t len, FamilyInfo& info) {
  return nla::walk(p, len,
                   [&](const nla::Attribute& a) {
                     if (a.type == CTRL_ATTR_FAMILY_ID && a.length >= 2) info.id = load_host<uint16_t>(a.payload);
                     if (a.type == CTRL_ATTR_FAMILY_NAME) info.name = string_of(a);
                     if (a.type != CTRL_ATTR_MCAST_GROUPS) return true;
                     return nla::walk(a.payload, a.length, [&](const nla::Attribute& group) {
                       return parse_multicast_group(group.payload, group.length, info);
                     });
                   }) &&
         info.id != 0;
}

// Whether [buf, buf + len) starts with a whole controller message; fills its header.
bool read_controller_header(const uint8_t* buf, size_t len, nlmsghdr& header) {
  if (len < sizeof(nlmsghdr)) return false;
  header = load_host<nlmsghdr>(buf);
  return header.nlmsg_type == GENL_ID_CTRL && header.nlmsg_len >= NLMSG_HDRLEN + GENL_HDRLEN && header.nlmsg_len <= len;
}

}  // namespace

uint32_t FamilyInfo::group_id(const std::string& group_name) const {
  for (const auto& [each_name, each_id] : multicast_groups)
    if (each_name == group_name) return each_id;
  return 0;
}

std::vector<uint8_t> build_get_family_request(const std::string& family, uint32_t seq) {
  const size_t name_attr_len = sizeof(nlattr) + family.size() + 1;
  const size_t total = NLMSG_HDRLEN + GENL_HDRLEN + align4(name_attr_len);
  std::vector<uint8_t> buf(total, 0);
  nlmsghdr header{};
  header.nlmsg_len = static_cast<uint32_t>(total);
  header.nlmsg_type = GENL_ID_CTRL;
  header.nlmsg_flags = NLM_F_REQUEST;
  header.nlmsg_seq = seq;
  std::memcpy(buf.data(), &header, sizeof header);
  genlmsghdr genl{};
  genl.cmd = CTRL_CMD_GETFAMILY;
  genl.version = 2;
  std::memcpy(buf.data() + NLMSG_HDRLEN, &genl, sizeof genl);
  nlattr attr{};
  attr.nla_len = static_cast<uint16_t>(name_attr_len);
  attr.nla_type = CTRL_ATTR_FAMILY_NAME;
  std::memcpy(buf.data() + NLMSG_HDRLEN + GENL_HDRLEN, &attr, sizeof attr);
  std::memcpy(buf.data() + NLMSG_HDRLEN + GENL_HDRLEN + sizeof attr, family.c_str(), family.size() + 1);
  return buf;
}

int parse_get_family_reply(const uint8_t* buf, size_t len, FamilyInfo& info) {
  if (len < sizeof(nlmsghdr)) return EBADMSG;
  const auto error_header = load_host<nlmsghdr>(buf);
  if (error_header.nlmsg_type == NLMSG_ERROR) {
    if (error_header.nlmsg_len < NLMSG_HDRLEN + sizeof(int) || error_header.nlmsg_len > len) return EBADMSG;
    const int error = load_host<int>(buf + NLMSG_HDRLEN);
    // INT_MIN has no positive counterpart (found by genl_family_fuzzer): no errno is that large.
    return error < 0 && error != std::numeric_limits<int>::min() ? -error : EBADMSG;
  }
  nlmsghdr header;
  if (!read_controller_header(buf, len, header)) return EBADMSG;
  const bool ok =
      parse_family_attributes(buf + NLMSG_HDRLEN + GENL_HDRLEN, header.nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, info);
  return ok ? 0 : EBADMSG;
}

FamilyEvent parse_family_event(const uint8_t* msg, size_t len, FamilyInfo& info) {
  nlmsghdr header;
  if (!read_controller_header(msg, len, header)) return FamilyEvent::kOther;
  const uint8_t cmd = msg[NLMSG_HDRLEN];
  if (cmd != CTRL_CMD_NEWFAMILY && cmd != CTRL_CMD_DELFAMILY) return FamilyEvent::kOther;
  if (!parse_family_attributes(msg + NLMSG_HDRLEN + GENL_HDRLEN, header.nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, info))
    return FamilyEvent::kOther;
  return cmd == CTRL_CMD_NEWFAMILY ? FamilyEvent::kRegistered : FamilyEvent::kUnregistered;
}

}  // namespace ovnpsample
