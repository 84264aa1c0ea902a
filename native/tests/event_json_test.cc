// watch's JSON line (../render/event_json.h): the time as Date.prototype.toISOString() writes it,
// the piece table's bounds, and the members each optional part adds or leaves out.
#include <cstdint>
#include <string>

#include "check.h"
#include "packet/packet_decoder.h"
#include "packet/packet_json.h"
#include "render/event_json.h"

namespace ovnpsample::testing {
namespace {

std::string iso(uint64_t ns) {
  std::string out;
  append_iso_time(out, ns);
  return out;
}

TEST_CASE("event_json: the time in UTC with nine digits, leap days and the last ns a u64 holds") {
  CHECK_EQ(iso(0), std::string("1970-01-01T00:00:00.000000000Z"));
  CHECK_EQ(iso(1), std::string("1970-01-01T00:00:00.000000001Z"));
  // new Date(Date.UTC(2024, 1, 29, 23, 59, 59)).toISOString()
  CHECK_EQ(iso(1709251199'123456789ull), std::string("2024-02-29T23:59:59.123456789Z"));
  CHECK_EQ(iso(951868800'000000000ull), std::string("2000-03-01T00:00:00.000000000Z"));
  CHECK_EQ(iso(4102444800'000000000ull), std::string("2100-01-01T00:00:00.000000000Z"));
  CHECK_EQ(iso(UINT64_MAX), std::string("2554-07-21T23:34:33.709551615Z"));
}

TEST_CASE("event_json: pieces are found by id until cleared, and ids past the table are refused") {
  PieceTable pieces;
  CHECK(pieces.find(0) == nullptr);
  CHECK(pieces.set(3, "three"));
  CHECK(pieces.find(2) == nullptr);
  CHECK_EQ(*pieces.find(3), std::string("three"));
  CHECK(pieces.set(PieceTable::kMaxPieces - 1, "last"));
  CHECK(!pieces.set(PieceTable::kMaxPieces, "past"));
  pieces.clear();
  CHECK(pieces.find(3) == nullptr);
}

TEST_CASE("event_json: the members in the schema's order, the optional ones only when present") {
  EventJsonLine line;
  line.timestamp_ns = 1750000000'000000042ull;
  line.head = ",\"verdict\":\"allow\",\"message\":\"m\"";
  line.steps = ",\"chain\":[]";
  line.group = 10;
  line.iifindex = 7;
  line.orig_size = 60;
  line.rate = 1;
  line.samples = 2;
  std::string out;
  std::string scratch;
  append_event_json(out, line, scratch);
  CHECK_EQ(
      out,
      std::string("{\"version\":1,\"time\":\"2025-06-15T15:06:40.000000042Z\",\"timestampNs\":\"1750000000000000042\","
                  "\"verdict\":\"allow\",\"message\":\"m\",\"chain\":[],\"group\":10,\"iifindex\":7,\"origSize\":60,"
                  "\"rate\":1,\"probability\":false,\"samples\":2}\n"));

  const std::string src = "{\"kind\":\"external\",\"ip\":\"10.0.0.1\"}";
  const std::string iface = ",\"interface\":\"eth0\"";
  const std::string datapath = "{\"key\":3}";
  const uint8_t cookie[] = {0x01, 0xab};
  const uint8_t frame[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x12, 0x34};
  const DecodedPacket packet = decode_packet(frame, sizeof frame, 0x1234);
  line.src = &src;
  line.interface = &iface;
  line.datapath = &datapath;
  line.has_oifindex = true;
  line.oifindex = 0;
  line.has_nsid = true;
  line.nsid = -1;
  line.probability = true;
  line.has_cookie = true;
  line.cookie = cookie;
  line.cookie_length = sizeof cookie;
  line.packet = &packet;
  std::string packet_json;
  append_packet_json(packet_json, packet);
  out.clear();
  append_event_json(out, line, scratch);
  CHECK_EQ(out,
           "{\"version\":1,\"time\":\"2025-06-15T15:06:40.000000042Z\",\"timestampNs\":\"1750000000000000042\","
           "\"verdict\":\"allow\",\"message\":\"m\",\"src\":" +
               src + ",\"chain\":[],\"group\":10,\"iifindex\":7" + iface +
               ",\"oifindex\":0,\"nsid\":-1,\"origSize\":60,\"rate\":1,\"probability\":true,\"cookie\":\"01ab\","
               "\"datapath\":" +
               datapath + ",\"samples\":2,\"packet\":" + packet_json + ",\"data\":\"000102030405060708090a0b1234\"}\n");
}

}  // namespace
}  // namespace ovnpsample::testing
