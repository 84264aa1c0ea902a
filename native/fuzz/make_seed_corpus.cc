// Writes the fuzzer's seed corpus: the real captures from test/fixtures/psample, and built
// datagrams for the paths no capture reaches (tunnels, the 5.8-5.11 layout, control messages,
// several messages per datagram). Usage: make_seed_corpus FIXTURE_DIR OUTPUT_DIR
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "../psample_parser.h"
#include "../tests/fixtures.h"
#include "../tests/netlink_builder.h"

namespace {

using ovnpsample::testing::NetlinkBuilder;
using ovnpsample::testing::kPsampleFamily;
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

bool write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(file);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s FIXTURE_DIR OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  ovnpsample::testing::fixture_directory() = argv[1];
  const std::string output = argv[2];
  if (mkdir(output.c_str(), 0755) != 0 && errno != EEXIST) {
    std::perror(output.c_str());
    return 1;
  }
  std::vector<uint8_t> all_captures;
  for (const std::string& name : ovnpsample::testing::fixture_names()) {
    const auto fixture = ovnpsample::testing::load_fixture(name);
    if (!fixture) {
      std::fprintf(stderr, "cannot read the capture %s in %s\n", name.c_str(), argv[1]);
      return 1;
    }
    all_captures.insert(all_captures.end(), fixture->bytes.begin(), fixture->bytes.end());
    all_captures.resize((all_captures.size() + 3) & ~size_t{3});
    if (!write_file(output + "/" + name + ".bin", fixture->bytes)) return 1;
  }
  const bool written = write_file(output + "/all-captures.bin", all_captures) &&
                       write_file(output + "/tunnel.bin", tunnel_sample(kAttrTunnel)) &&
                       write_file(output + "/tunnel-5.8.bin", tunnel_sample(kAttrGroupRefcount)) &&
                       write_file(output + "/group-and-control.bin", group_and_control_messages());
  return written ? 0 : 1;
}
