// The packet decoder's JSON (../packet_json.h) on the real captures and the cases worth a name;
// test/packet/packet-json-golden.test.ts checks it byte for byte on 13k inputs through the addon.
#include <memory>
#include <string>
#include <vector>

#include "check.h"
#include "fixtures.h"
#include "packet/packet_json.h"
#include "strict_json.h"
#include "wire/psample_parser.h"

namespace ovnpsample::testing {
namespace {

// Decodes a heap copy of exactly the bytes, so AddressSanitizer catches any read past them.
std::string json_of(const std::vector<uint8_t>& bytes, uint16_t proto) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[bytes.size()]);
  std::copy(bytes.begin(), bytes.end(), copy.get());
  std::string json;
  append_packet_json(json, copy.get(), bytes.size(), proto);
  return json;
}

std::vector<uint8_t> bytes_of(const std::string& hex) { return *decode_hex(hex); }

TEST_CASE("packet_json: the OVS capture's ARP request") {
  const auto fixture = load_fixture("ovs-1");
  if (!CHECK(fixture.has_value())) return;
  std::vector<Message> messages;
  Stats stats{};
  parse_datagram(fixture->bytes.data(), fixture->bytes.size(), 0, messages, stats);
  if (!CHECK_EQ(messages.size(), size_t{1})) return;
  const Message& m = messages[0];
  const std::vector<uint8_t> data(
      fixture->bytes.begin() + static_cast<std::ptrdiff_t>(m.data.offset),
      fixture->bytes.begin() + static_cast<std::ptrdiff_t>(m.data.offset) + static_cast<std::ptrdiff_t>(m.data.length));
  CHECK_EQ(
      json_of(data, m.proto),
      std::string("{\"link\":\"ethernet\",\"length\":42,\"etherType\":2054,\"truncated\":false,"
                  "\"ethernet\":{\"dst\":\"ff:ff:ff:ff:ff:ff\",\"src\":\"d6:2e:62:b1:d7:39\",\"vlans\":[]},"
                  "\"network\":{\"kind\":\"arp\",\"hardwareType\":1,\"protocolType\":2048,\"op\":1,"
                  "\"senderMac\":\"d6:2e:62:b1:d7:39\",\"senderIp\":\"10.0.0.1\",\"targetMac\":\"00:00:00:00:00:00\","
                  "\"targetIp\":\"10.0.0.2\"}}"));
}

TEST_CASE("packet_json: no data is an Ethernet header cut at once") {
  CHECK_EQ(json_of({}, 0x0800), std::string("{\"link\":\"ethernet\",\"length\":0,\"etherType\":2048,\"truncated\":true,"
                                            "\"truncatedLayer\":\"ethernet\"}"));
}

TEST_CASE("packet_json: members follow the order decoding set them (the problem after the header it is in)") {
  // Raw IPv4, total length 60 but 20 bytes of data, UDP: truncated in udp after the network layer.
  const std::string json = json_of(bytes_of("4500003c000000004011000001020304050607080000"), 0x0800);
  CHECK(json.find("\"network\":") < json.find("\"truncatedLayer\":\"udp\""));
  // A TCP data offset below 5 words: the transport header first, then what is wrong with it.
  const std::string tcp =
      json_of(bytes_of("45000028000000004006000001020304050607080001000200000001000000022002000000000000"), 0x0800);
  CHECK(tcp.find("\"transport\":{\"kind\":\"tcp\"") <
        tcp.find("\"malformed\":{\"layer\":\"tcp\",\"reason\":\"data offset 8 is below the minimum 20 bytes\"}"));
}

TEST_CASE("packet_json: IPv6 text forms (RFC 5952)") {
  const std::pair<const char*, const char*> cases[] = {
      {"20010db8000000000000000000000001", "2001:db8::1"},
      {"20010db8000000010001000100010001", "2001:db8:0:1:1:1:1:1"},
      {"20010db8000000000001000000000001", "2001:db8::1:0:0:1"},
      {"00000000000000000000000000000000", "::"},
      {"00000000000000000000ffffc0000201", "::ffff:192.0.2.1"},
      {"00000000000000000001ffffc0000201", "::1:ffff:c000:201"},
      {"fe800000000000000000000000000000", "fe80::"},
  };
  for (const auto& [hex, text] : cases) {
    const std::string json = json_of(bytes_of(std::string("6000000000003bff") + hex + hex), 0x86dd);
    CHECK(json.find(std::string("\"src\":\"") + text + "\",\"dst\":\"" + text + "\"") != std::string::npos);
  }
}

TEST_CASE("packet_json: appends, leaving what the string held") {
  const std::vector<uint8_t> data = bytes_of("ffffffffffff0a580af400050806");
  std::string out(1000, 'x');
  append_packet_json(out, data.data(), data.size(), 0x0806);
  CHECK_EQ(out.substr(0, 1000), std::string(1000, 'x'));
  CHECK_EQ(out.substr(1000), json_of(data, 0x0806));
}

TEST_CASE("packet_json: hundreds of VLAN tags grow the string past its first room") {
  std::vector<uint8_t> data(12, 0xaa);
  for (int i = 0; i < 400; i++) data.insert(data.end(), {0x81, 0x00, 0x0f, 0xff});
  data.insert(data.end(), {0x88, 0xcc});
  const std::string json = json_of(data, 0x8100);
  CHECK_EQ(StrictJson::check(json), std::string());
  CHECK(json.find("\"unknown\":{\"kind\":\"ethertype\",\"value\":35020}") != std::string::npos);
}

TEST_CASE("strict_json: accepts what JSON.stringify writes, rejects the rest") {
  CHECK_EQ(StrictJson::check("{\"a\":[1,-20,true,false,null,\"x y\"],\"b\":{}}"), std::string());
  for (const char* bad : {"", "{", "{\"a\":1,\"a\":2}", "{\"a\": 1}", "[01]", "[1.5]", "[1e3]", "\"\\n\"", "[\"\t\"]",
                          "{}x", "[1,]", "{\"a\"}", "tru", "[\"\x80\"]", "[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]"}) {
    CHECK(!StrictJson::check(bad).empty());
  }
}

}  // namespace
}  // namespace ovnpsample::testing
