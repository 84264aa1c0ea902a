#include "genl_family.h"

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <cerrno>
#include <cstring>

#include "nla.h"

namespace ovnpsample {

namespace {

using nla::align4;
using nla::load_host;

bool parse_multicast_group(const uint8_t* p, size_t len, FamilyInfo& info) {
  std::string name;
  uint32_t id = 0;
  bool ok = nla::walk(p, len, [&](const nla::Attribute& a) {
    if (a.type == CTRL_ATTR_MCAST_GRP_NAME)
      name.assign(reinterpret_cast<const char*>(a.payload), strnlen(reinterpret_cast<const char*>(a.payload), a.length));
    if (a.type == CTRL_ATTR_MCAST_GRP_ID && a.length >= 4) id = load_host<uint32_t>(a.payload);
    return true;
  });
  if (ok && !name.empty() && id != 0) info.multicast_groups.emplace_back(name, id);
  return ok;
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
  const auto header = load_host<nlmsghdr>(buf);
  if (header.nlmsg_len < sizeof(nlmsghdr) || header.nlmsg_len > len) return EBADMSG;
  if (header.nlmsg_type == NLMSG_ERROR) {
    if (header.nlmsg_len < NLMSG_HDRLEN + sizeof(int)) return EBADMSG;
    int error = load_host<int>(buf + NLMSG_HDRLEN);
    return error < 0 ? -error : EBADMSG;
  }
  if (header.nlmsg_type != GENL_ID_CTRL || header.nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN) return EBADMSG;
  const uint8_t* attrs = buf + NLMSG_HDRLEN + GENL_HDRLEN;
  const size_t attrs_len = header.nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
  bool ok = nla::walk(attrs, attrs_len, [&](const nla::Attribute& a) {
    if (a.type == CTRL_ATTR_FAMILY_ID && a.length >= 2) info.id = load_host<uint16_t>(a.payload);
    if (a.type != CTRL_ATTR_MCAST_GROUPS) return true;
    return nla::walk(a.payload, a.length, [&](const nla::Attribute& group) {
      return parse_multicast_group(group.payload, group.length, info);
    });
  });
  return ok && info.id != 0 ? 0 : EBADMSG;
}

}  // namespace ovnpsample
