#include "genl_family.h"

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <cerrno>
#include <cstring>

namespace ovnpsample {

namespace {

template <typename T>
T load(const uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

constexpr size_t align4(size_t n) { return (n + 3) & ~size_t{3}; }

// Calls visit(type, payload, payload_len) for each attribute; false if an attribute is garbled.
template <typename Visit>
bool for_each_attribute(const uint8_t* p, size_t len, Visit visit) {
  size_t pos = 0;
  while (pos + sizeof(nlattr) <= len) {
    const auto attr = load<nlattr>(p + pos);
    if (attr.nla_len < sizeof(nlattr) || attr.nla_len > len - pos) return false;
    visit(attr.nla_type & NLA_TYPE_MASK, p + pos + sizeof(nlattr), attr.nla_len - sizeof(nlattr));
    pos += align4(attr.nla_len);
  }
  return true;
}

bool parse_multicast_group(const uint8_t* p, size_t len, FamilyInfo& info) {
  std::string name;
  uint32_t id = 0;
  bool ok = for_each_attribute(p, len, [&](uint16_t type, const uint8_t* v, size_t n) {
    if (type == CTRL_ATTR_MCAST_GRP_NAME) name.assign(reinterpret_cast<const char*>(v), strnlen(reinterpret_cast<const char*>(v), n));
    if (type == CTRL_ATTR_MCAST_GRP_ID && n >= 4) id = load<uint32_t>(v);
  });
  if (ok && !name.empty() && id != 0) info.multicast_groups.emplace_back(name, id);
  return ok;
}

}  // namespace

uint32_t FamilyInfo::group_id(const std::string& name) const {
  for (const auto& [group_name, id] : multicast_groups)
    if (group_name == name) return id;
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
  const auto header = load<nlmsghdr>(buf);
  if (header.nlmsg_len < sizeof(nlmsghdr) || header.nlmsg_len > len) return EBADMSG;
  if (header.nlmsg_type == NLMSG_ERROR) {
    if (header.nlmsg_len < NLMSG_HDRLEN + sizeof(int)) return EBADMSG;
    int error = load<int>(buf + NLMSG_HDRLEN);
    return error < 0 ? -error : EBADMSG;
  }
  if (header.nlmsg_type != GENL_ID_CTRL || header.nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN) return EBADMSG;
  const uint8_t* attrs = buf + NLMSG_HDRLEN + GENL_HDRLEN;
  const size_t attrs_len = header.nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
  bool groups_ok = true;
  bool ok = for_each_attribute(attrs, attrs_len, [&](uint16_t type, const uint8_t* v, size_t n) {
    if (type == CTRL_ATTR_FAMILY_ID && n >= 2) info.id = load<uint16_t>(v);
    if (type == CTRL_ATTR_MCAST_GROUPS) {
      bool each_ok = true;
      const bool list_ok = for_each_attribute(v, n, [&](uint16_t, const uint8_t* g, size_t gn) {
        each_ok = each_ok && parse_multicast_group(g, gn, info);
      });
      groups_ok = groups_ok && list_ok && each_ok;
    }
  });
  return ok && groups_ok && info.id != 0 ? 0 : EBADMSG;
}

}  // namespace ovnpsample
