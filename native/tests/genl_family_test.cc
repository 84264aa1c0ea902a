#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "check.h"
#include "fixtures.h"
#include "netlink_builder.h"
#include "wire/genl_family.h"

namespace ovnpsample::testing {
namespace {

// The controller's answer for psample as the kernel lays it out (ctrl_fill_info); its
// NEWFAMILY / DELFAMILY notifications carry the same attributes.
NetlinkBuilder family_reply(bool garble_group = false, uint8_t cmd = CTRL_CMD_NEWFAMILY, uint16_t id = 34) {
  NetlinkBuilder b;
  b.begin_message(GENL_ID_CTRL).genl(cmd, 2);
  b.attr(CTRL_ATTR_FAMILY_NAME, "psample", 8);
  b.attr_host<uint16_t>(CTRL_ATTR_FAMILY_ID, id);
  b.attr_host<uint32_t>(CTRL_ATTR_VERSION, 1);
  b.begin_nest(CTRL_ATTR_MCAST_GROUPS);
  b.begin_nest(1)
      .attr_host<uint32_t>(CTRL_ATTR_MCAST_GRP_ID, 14)
      .attr(CTRL_ATTR_MCAST_GRP_NAME, "config", 7)
      .end_nest();
  b.begin_nest(2).attr_host<uint32_t>(CTRL_ATTR_MCAST_GRP_ID, 15);
  if (garble_group) b.raw({0xff, 0x00, 0x02, 0x00});  // nla_len 255 runs past the nest
  b.attr(CTRL_ATTR_MCAST_GRP_NAME, "packets", 8).end_nest();
  b.end_nest();
  b.end_message();
  return b;
}

TEST_CASE("genl: real controller replies of a 6.18 kernel give their family ids and groups") {
  const struct {
    const char* name;
    uint16_t id;
    std::vector<std::pair<std::string, uint32_t>> groups;
  } expected[] = {
      {"nlctrl", 16, {{"notify", 16}}},
      {"thermal", 19, {{"sampling", 2}, {"event", 3}}},
      {"netdev", 20, {{"mgmt", 4}, {"page-pool", 5}}},
      {"ethtool", 21, {{"monitor", 6}}},
      {"acpi_event", 26, {{"acpi_mc_group", 7}}},
      {"mptcp_pm", 28, {{"mptcp_pm_cmds", 8}, {"mptcp_pm_events", 9}}},
  };
  for (const auto& e : expected) {
    const auto text = read_text(fixture_directory() + "/../genl/" + e.name + ".hex");
    const auto bytes = text ? decode_hex(*text) : std::nullopt;
    if (!CHECK(bytes.has_value())) continue;
    FamilyInfo info;
    CHECK_EQ(parse_get_family_reply(bytes->data(), bytes->size(), info), 0);
    CHECK_EQ(info.id, e.id);
    CHECK(info.name == e.name);
    CHECK(info.multicast_groups == e.groups);
  }
  const auto text = read_text(fixture_directory() + "/../genl/psample-enoent.hex");
  const auto enoent = text ? decode_hex(*text) : std::nullopt;
  FamilyInfo info;
  if (CHECK(enoent.has_value())) CHECK_EQ(parse_get_family_reply(enoent->data(), enoent->size(), info), ENOENT);
}

TEST_CASE("genl: the psample family id and both multicast groups are read") {
  const auto b = family_reply();
  FamilyInfo info;
  CHECK_EQ(parse_get_family_reply(b.bytes().data(), b.size(), info), 0);
  CHECK_EQ(info.id, 34);
  CHECK(info.name == "psample");
  CHECK_EQ(info.group_id("config"), 14u);
  CHECK_EQ(info.group_id("packets"), 15u);
  CHECK_EQ(info.group_id("nope"), 0u);
}

TEST_CASE("genl: a garbled multicast group makes the whole reply malformed") {
  const auto b = family_reply(true);
  FamilyInfo info;
  CHECK_EQ(parse_get_family_reply(b.bytes().data(), b.size(), info), EBADMSG);
}

TEST_CASE("genl: the kernel's ENOENT for an unknown family is returned as such") {
  NetlinkBuilder b;
  b.begin_message(NLMSG_ERROR).raw_host<int32_t>(-ENOENT);
  b.raw_host<uint32_t>(28)
      .raw_host<uint16_t>(GENL_ID_CTRL)
      .raw_host<uint16_t>(NLM_F_REQUEST)
      .raw_host<uint32_t>(1)
      .raw_host<uint32_t>(0);
  b.end_message();
  FamilyInfo info;
  CHECK_EQ(parse_get_family_reply(b.bytes().data(), b.size(), info), ENOENT);
}

TEST_CASE("genl: an NLMSG_ERROR that is no negative errno is malformed (INT_MIN: found by the fuzzer)") {
  for (const int32_t error : {std::numeric_limits<int32_t>::min(), 0, 5}) {
    NetlinkBuilder b;
    b.begin_message(NLMSG_ERROR).raw_host<int32_t>(error).end_message();
    FamilyInfo info;
    CHECK_EQ(parse_get_family_reply(b.bytes().data(), b.size(), info), EBADMSG);
  }
}

TEST_CASE("genl: every truncation of a reply is malformed, never read past") {
  const auto b = family_reply();
  for (size_t cut = 0; cut < b.size(); cut++) {
    FamilyInfo info;
    CHECK_EQ(parse_get_family_reply(b.bytes().data(), cut, info), EBADMSG);
  }
}

TEST_CASE("genl: NEWFAMILY and DELFAMILY notifications name the family, its id and its groups") {
  const auto registered = family_reply(false, CTRL_CMD_NEWFAMILY, 35);
  FamilyInfo info;
  CHECK(parse_family_event(registered.bytes().data(), registered.size(), info) == FamilyEvent::kRegistered);
  CHECK(info.name == "psample");
  CHECK_EQ(info.id, 35);
  CHECK_EQ(info.group_id("packets"), 15u);

  const auto unregistered = family_reply(false, CTRL_CMD_DELFAMILY);
  FamilyInfo gone;
  CHECK(parse_family_event(unregistered.bytes().data(), unregistered.size(), gone) == FamilyEvent::kUnregistered);
  CHECK(gone.name == "psample");
  CHECK_EQ(gone.id, 34);
}

TEST_CASE("genl: other controller commands, garbled notifications and truncations are not family events") {
  for (const uint8_t cmd :
       {uint8_t{CTRL_CMD_NEWMCAST_GRP}, uint8_t{CTRL_CMD_DELMCAST_GRP}, uint8_t{CTRL_CMD_GETFAMILY}}) {
    const auto other = family_reply(false, cmd);
    FamilyInfo info;
    CHECK(parse_family_event(other.bytes().data(), other.size(), info) == FamilyEvent::kOther);
  }
  const auto garbled = family_reply(true, CTRL_CMD_DELFAMILY);
  FamilyInfo info;
  CHECK(parse_family_event(garbled.bytes().data(), garbled.size(), info) == FamilyEvent::kOther);
  const auto whole = family_reply(false, CTRL_CMD_DELFAMILY);
  for (size_t cut = 0; cut < whole.size(); cut++) {
    FamilyInfo cut_info;
    CHECK(parse_family_event(whole.bytes().data(), cut, cut_info) == FamilyEvent::kOther);
  }
}

TEST_CASE("genl: the request names the family after nlmsghdr and genlmsghdr") {
  const auto request = build_get_family_request("psample", 7);
  nlmsghdr header;
  std::memcpy(&header, request.data(), sizeof header);
  CHECK_EQ(header.nlmsg_len, request.size());
  CHECK_EQ(header.nlmsg_type, GENL_ID_CTRL);
  CHECK_EQ(header.nlmsg_seq, 7u);
  CHECK_EQ(request[NLMSG_HDRLEN], CTRL_CMD_GETFAMILY);
  CHECK(std::string(reinterpret_cast<const char*>(request.data()) + NLMSG_HDRLEN + GENL_HDRLEN + 4) == "psample");
}

}  // namespace
}  // namespace ovnpsample::testing
