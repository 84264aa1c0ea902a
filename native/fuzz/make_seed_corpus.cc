// Writes the fuzzers' seeds, one directory per target: the real captures (test/fixtures/psample:
// psample messages; test/fixtures/genl: controller replies), and built inputs for the paths no
// capture reaches (tunnels, the 5.8-5.11 layout, control messages, several messages per
// datagram, controller notifications). Usage: make_seed_corpus FIXTURES_DIR OUTPUT_DIR
#include <dirent.h>
#include <linux/genetlink.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "../tests/fixtures.h"
#include "../tests/netlink_builder.h"
#include "datagram_batch_input.h"
#include "wire/psample_parser.h"

namespace {

using ovnpsample::testing::kPsampleFamily;
using ovnpsample::testing::NetlinkBuilder;
using namespace ovnpsample;

std::vector<uint8_t> tunnel_sample(uint16_t tunnel_type) {
  NetlinkBuilder b;
  b.begin_message(kPsampleFamily).genl(kCmdSample).attr_host<uint32_t>(kAttrSampleGroup, 1);
  b.begin_nest(tunnel_type).attr_big_endian<uint64_t>(kTunId, 7).attr(kTunIpv4Src, {10, 0, 0, 1});
  b.attr(kTunIpv4Dst, {10, 0, 0, 2}).attr_host<uint8_t>(kTunTos, 1).attr_host<uint8_t>(kTunTtl, 64);
  b.flag(kTunDontFragment).flag(kTunCsum).flag(kTunOam).flag(kTunIpv4InfoBridge);
  b.attr(kTunGeneveOpts, {1, 2, 3, 4}).attr_big_endian<uint16_t>(kTunTpSrc, 1).attr_big_endian<uint16_t>(kTunTpDst, 2);
  b.begin_nest(kTunVxlanOpts).attr_host<uint32_t>(1, 5).end_nest();
  b.attr(kTunIpv6Src, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
  b.attr(kTunIpv6Dst, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
  b.attr(kTunErspanOpts, {0, 0, 0, 1}).end_nest();
  b.attr_host<uint16_t>(kAttrOutTc, 1).attr_host<uint64_t>(kAttrOutTcOcc, 2).attr_host<uint64_t>(kAttrLatency, 3);
  b.attr_host<uint16_t>(kAttrOifindex, 4).attr_host<uint32_t>(99, 0).end_message();
  return b.bytes();
}

std::vector<uint8_t> group_and_control_messages() {
  NetlinkBuilder b;
  b.begin_message(kPsampleFamily).genl(kCmdNewGroup).attr_host<uint32_t>(kAttrSampleGroup, 3);
  b.attr_host<uint32_t>(kAttrGroupRefcount, 1).end_message();
  // An unfixed 5.8-5.11 kernel sends the refcount as attribute 8.
  b.begin_message(kPsampleFamily).genl(kCmdDelGroup).attr_host<uint32_t>(kAttrSampleGroup, 3);
  b.attr_host<uint32_t>(kAttrTunnel, 0).end_message();
  b.begin_message(2).raw_host<int32_t>(-1).raw({20, 0, 0, 0, 16, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0}).end_message();
  b.begin_message(3).raw_host<int32_t>(0).end_message();
  b.begin_message(4).end_message();
  b.begin_message(1).end_message();
  b.begin_message(0x10).genl(3).end_message();
  return b.bytes();
}

// psample's reply as ctrl_fill_info() lays it out (this machine's kernel has no psample to ask).
std::vector<uint8_t> psample_family_reply() {
  NetlinkBuilder b;
  b.begin_message(GENL_ID_CTRL).genl(CTRL_CMD_NEWFAMILY, 2);
  b.attr(CTRL_ATTR_FAMILY_NAME, "psample", 8).attr_host<uint16_t>(CTRL_ATTR_FAMILY_ID, 34);
  b.attr_host<uint32_t>(CTRL_ATTR_VERSION, 1).attr_host<uint32_t>(CTRL_ATTR_HDRSIZE, 0);
  b.attr_host<uint32_t>(CTRL_ATTR_MAXATTR, 16).begin_nest(CTRL_ATTR_MCAST_GROUPS);
  b.begin_nest(1)
      .attr_host<uint32_t>(CTRL_ATTR_MCAST_GRP_ID, 14)
      .attr(CTRL_ATTR_MCAST_GRP_NAME, "config", 7)
      .end_nest();
  b.begin_nest(2)
      .attr_host<uint32_t>(CTRL_ATTR_MCAST_GRP_ID, 15)
      .attr(CTRL_ATTR_MCAST_GRP_NAME, "packets", 8)
      .end_nest();
  b.end_nest().end_message();
  return b.bytes();
}

// The group filter fuzzer's input: how many groups - 1, the groups, the datagram.
std::vector<uint8_t> filter_input(const std::vector<uint32_t>& groups, const std::vector<uint8_t>& datagram) {
  std::vector<uint8_t> input{static_cast<uint8_t>(groups.size() - 1)};
  for (const uint32_t group : groups) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(&group);
    input.insert(input.end(), bytes, bytes + sizeof group);
  }
  input.insert(input.end(), datagram.begin(), datagram.end());
  return input;
}

class Writer {
 public:
  explicit Writer(std::string root) : root_(std::move(root)) {}

  bool directory(const std::string& name) {
    current_ = root_ + "/" + name;
    for (const std::string& path : {root_, current_}) {
      if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
        std::perror(path.c_str());
        return false;
      }
    }
    return true;
  }

  bool file(const std::string& name, const std::vector<uint8_t>& bytes) {
    std::ofstream out(current_ + "/" + name, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) std::fprintf(stderr, "cannot write %s/%s\n", current_.c_str(), name.c_str());
    return static_cast<bool>(out);
  }

 private:
  std::string root_;
  std::string current_;
};

std::vector<std::string> hex_files(const std::string& directory) {
  std::vector<std::string> names;
  if (DIR* dir = opendir(directory.c_str())) {
    while (const dirent* entry = readdir(dir)) {
      const std::string name = entry->d_name;
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".hex") == 0)
        names.push_back(name.substr(0, name.size() - 4));
    }
    closedir(dir);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s FIXTURES_DIR OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string fixtures = argv[1];
  ovnpsample::testing::fixture_directory() = fixtures + "/psample";
  Writer out(argv[2]);

  std::vector<std::vector<uint8_t>> captures;
  for (const std::string& name : ovnpsample::testing::fixture_names()) {
    const auto fixture = ovnpsample::testing::load_fixture(name);
    if (!fixture) {
      std::fprintf(stderr, "cannot read the capture %s in %s/psample\n", name.c_str(), fixtures.c_str());
      return 1;
    }
    captures.push_back(fixture->bytes);
  }
  std::vector<uint8_t> all_captures;
  for (const auto& capture : captures) {
    all_captures.insert(all_captures.end(), capture.begin(), capture.end());
    all_captures.resize((all_captures.size() + 3) & ~size_t{3});
  }
  const std::vector<uint8_t> built[] = {tunnel_sample(kAttrTunnel), tunnel_sample(kAttrGroupRefcount),
                                        group_and_control_messages()};

  bool ok = out.directory("psample_parser");
  for (size_t i = 0; i < captures.size(); i++)
    ok = ok && out.file(ovnpsample::testing::fixture_names()[i] + ".bin", captures[i]);
  ok = ok && out.file("all-captures.bin", all_captures) && out.file("tunnel.bin", built[0]) &&
       out.file("tunnel-5.8.bin", built[1]) && out.file("group-and-control.bin", built[2]);

  ok = ok && out.directory("group_filter");
  for (size_t i = 0; i < captures.size(); i++) {
    const auto parsed_group = [&] {
      std::vector<Message> messages;
      Stats counters{};
      parse_datagram(captures[i].data(), captures[i].size(), 0, messages, counters);
      return messages.empty() ? 0u : messages[0].group;
    }();
    const std::string name = ovnpsample::testing::fixture_names()[i];
    ok = ok && out.file(name + "-wanted.bin", filter_input({parsed_group + 1, parsed_group}, captures[i])) &&
         out.file(name + "-unwanted.bin", filter_input({parsed_group + 1}, captures[i]));
  }
  ok = ok && out.file("all-captures.bin", filter_input({7, 10}, all_captures)) &&
       out.file("tunnel.bin", filter_input({1}, built[0])) &&
       out.file("group-and-control.bin", filter_input({2}, built[2]));

  // The sampled packets of the captures, as packet_json's input: PROTO (big-endian), then DATA.
  ok = ok && out.directory("packet_json");
  for (size_t i = 0; i < captures.size(); i++) {
    std::vector<Message> messages;
    Stats counters{};
    parse_datagram(captures[i].data(), captures[i].size(), 0, messages, counters);
    for (const Message& m : messages) {
      std::vector<uint8_t> input{static_cast<uint8_t>(m.proto >> 8), static_cast<uint8_t>(m.proto)};
      input.insert(input.end(), captures[i].begin() + static_cast<std::ptrdiff_t>(m.data.offset),
                   captures[i].begin() + static_cast<std::ptrdiff_t>(m.data.offset + m.data.length));
      ok = ok && out.file(ovnpsample::testing::fixture_names()[i] + ".bin", input);
    }
  }

  ok = ok && out.directory("genl_family");
  for (const std::string& name : hex_files(fixtures + "/genl")) {
    const auto text = ovnpsample::testing::read_text(fixtures + "/genl/" + name + ".hex");
    const auto bytes = text ? ovnpsample::testing::decode_hex(*text) : std::nullopt;
    if (!bytes) {
      std::fprintf(stderr, "cannot read the capture %s/genl/%s.hex\n", fixtures.c_str(), name.c_str());
      return 1;
    }
    ok = ok && out.file(name + ".bin", *bytes);
    // The NEWFAMILY / DELFAMILY notifications carry the same attributes as the reply.
    if (bytes->size() > 16 && (*bytes)[16] == CTRL_CMD_NEWFAMILY) {
      std::vector<uint8_t> removed = *bytes;
      removed[16] = CTRL_CMD_DELFAMILY;
      ok = ok && out.file(name + "-delfamily.bin", removed);
    }
  }
  ok = ok && out.file("psample.bin", psample_family_reply());

  // The datagram_batch fuzzer's input: a setup, then datagrams with their sender, nsid and flags.
  using ovnpsample::fuzzing::BatchSetup;
  using ovnpsample::fuzzing::FuzzDatagram;
  using ovnpsample::fuzzing::write_datagram;
  using ovnpsample::fuzzing::write_setup;
  const FuzzDatagram from_kernel;
  ok = ok && out.directory("datagram_batch");
  for (size_t i = 0; i < captures.size(); i++) {
    std::vector<uint8_t> input = write_setup(BatchSetup{}, 0, 0, 0);
    write_datagram(input, from_kernel, captures[i]);
    ok = ok && out.file(ovnpsample::testing::fixture_names()[i] + ".bin", input);
  }
  BatchSetup some_groups;
  some_groups.groups = {7};  // the OVS captures (group 10) are filtered out
  std::vector<uint8_t> mixed = write_setup(some_groups, 1, 0, 0);
  FuzzDatagram peer;  // a peer namespace's copy
  peer.has_nsid = true;
  peer.nsid = 3;
  FuzzDatagram impostor;
  impostor.from_kernel_port = false;
  FuzzDatagram truncated;
  truncated.truncated = true;
  FuzzDatagram taken;  // JavaScript took what was handed over before it came
  taken.take_before = true;
  for (const auto& capture : captures) write_datagram(mixed, from_kernel, capture);
  write_datagram(mixed, peer, captures[0]);
  write_datagram(mixed, impostor, captures[1]);
  write_datagram(mixed, truncated, captures[2]);
  write_datagram(mixed, taken, all_captures);
  ok = ok && out.file("mixed.bin", mixed);

  std::vector<uint8_t> tunnels = write_setup(BatchSetup{}, 0, 0, 0);
  write_datagram(tunnels, from_kernel, built[0]);
  write_datagram(tunnels, peer, built[1]);
  ok = ok && out.file("tunnel.bin", tunnels);

  std::vector<uint8_t> control = write_setup(BatchSetup{}, 0, 0, 0);
  write_datagram(control, from_kernel, built[2]);
  write_datagram(control, from_kernel, psample_family_reply());
  write_datagram(control, peer, psample_family_reply());
  ok = ok && out.file("group-and-control.bin", control);

  std::vector<uint8_t> queue_full = write_setup(BatchSetup{}, 2, 3, 2);
  for (int round = 0; round < 2; round++) {
    for (const auto& capture : captures) write_datagram(queue_full, round == 1 ? taken : from_kernel, capture);
  }
  ok = ok && out.file("queue-full.bin", queue_full);

  BatchSetup closing;
  closing.closing = true;
  std::vector<uint8_t> closed = write_setup(closing, 0, 0, 0);
  write_datagram(closed, from_kernel, all_captures);
  write_datagram(closed, from_kernel, psample_family_reply());
  ok = ok && out.file("closing.bin", closed);

  BatchSetup injected;  // an injection source: userspace senders are its normal case
  injected.kernel_only = false;
  injected.any_family = true;
  std::vector<uint8_t> injection = write_setup(injected, 0, 0, 0);
  write_datagram(injection, impostor, all_captures);
  ok = ok && out.file("injection.bin", injection);

  // The sample_json fuzzer's input (sample_json_fuzzer.cc): flags, output room, byte changes,
  // then datagrams as above.
  const auto json_input = [](uint8_t flags, uint8_t room, std::vector<uint8_t> changes) {
    std::vector<uint8_t> input{flags, room, static_cast<uint8_t>(changes.size() / 3)};
    input.insert(input.end(), changes.begin(), changes.end());
    return input;
  };
  constexpr uint8_t kWithEvents = 2;
  constexpr uint8_t kSamplesOnly = 1;
  ok = ok && out.directory("sample_json");
  for (size_t i = 0; i < captures.size(); i++) {
    std::vector<uint8_t> input = json_input(kWithEvents, 0, {});
    write_datagram(input, from_kernel, captures[i]);
    ok = ok && out.file(ovnpsample::testing::fixture_names()[i] + ".bin", input);
  }
  std::vector<uint8_t> json_all =
      json_input(kWithEvents | kSamplesOnly, 4, {});  // 256 bytes of room: out of room often
  for (const auto& capture : captures) write_datagram(json_all, from_kernel, capture);
  write_datagram(json_all, peer, built[0]);
  write_datagram(json_all, from_kernel, built[1]);
  write_datagram(json_all, from_kernel, built[2]);
  ok = ok && out.file("all.bin", json_all);
  // A record whose length (its last field, at 84) and packet length (at 68) lie.
  std::vector<uint8_t> json_lying = json_input(0, 0, {84, 0, 0xff, 68, 0, 0x7f});
  write_datagram(json_lying, from_kernel, all_captures);
  ok = ok && out.file("lying.bin", json_lying);

  // The flow_table fuzzer's input (flow_table_fuzzer.cc): window, cap, flags, byte changes, then
  // datagrams as above, each a batch.
  const auto flow_input = [](uint8_t window_ms, uint8_t cap, uint8_t flags, std::vector<uint8_t> changes) {
    std::vector<uint8_t> input{window_ms, cap, flags, static_cast<uint8_t>(changes.size() / 3)};
    input.insert(input.end(), changes.begin(), changes.end());
    return input;
  };
  ok = ok && out.directory("flow_table");
  std::vector<uint8_t> grouped = flow_input(50, 255, 0, {});
  for (const auto& capture : captures) write_datagram(grouped, from_kernel, capture);
  ok = ok && out.file("grouped.bin", grouped);
  std::vector<uint8_t> capped = flow_input(0, 0, 1, {});  // one flow, every sample a packet
  for (const auto& capture : captures) write_datagram(capped, taken, capture);
  ok = ok && out.file("capped.bin", capped);
  std::vector<uint8_t> flow_lying = flow_input(50, 255, 0, {84, 0, 0xff, 68, 0, 0x7f});
  write_datagram(flow_lying, from_kernel, all_captures);
  ok = ok && out.file("lying.bin", flow_lying);

  // The watch_lines fuzzer's input (watch_lines_fuzzer.cc): window, --count, flags, byte changes,
  // then datagrams as above, each a batch (the same shape as flow_table's).
  ok = ok && out.directory("watch_lines");
  std::vector<uint8_t> lines_grouped = flow_input(50, 255, 0, {});
  for (const auto& capture : captures) write_datagram(lines_grouped, from_kernel, capture);
  ok = ok && out.file("grouped.bin", lines_grouped);
  std::vector<uint8_t> lines_counted = flow_input(0, 3, 3, {});  // --count 3, every third route filtered out
  for (const auto& capture : captures) write_datagram(lines_counted, taken, capture);
  ok = ok && out.file("counted.bin", lines_counted);
  std::vector<uint8_t> lines_lying = flow_input(50, 255, 0, {84, 0, 0xff, 68, 0, 0x7f});
  write_datagram(lines_lying, from_kernel, all_captures);
  ok = ok && out.file("lying.bin", lines_lying);
  std::vector<uint8_t> lines_human = flow_input(50, 255, 4 | 8, {});  // the human line, in colour
  for (const auto& capture : captures) write_datagram(lines_human, from_kernel, capture);
  ok = ok && out.file("human.bin", lines_human);
  return ok ? 0 : 1;
}
