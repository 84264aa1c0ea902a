// `watch --format json`'s line of one packet (src/output/event-json.ts hands it over): THE
// implementation of that line. What comes from the packet and its samples (the time, the
// numbers, the cookie, the packet's JSON and bytes) is written here; what comes from the
// databases and the configuration (the verdict and message, the endpoints, the chain, the
// interface name, the datapath) arrives as JSON bytes TypeScript made once per chain, endpoint,
// name or datapath and keeps in a PieceTable by id. Pure C++ (no N-API); the members, their
// order and their forms are README.md's "watch --format json" schema:
//
//   {"version":1,"time":ISO,"timestampNs":"NS"HEAD[,"src":SRC][,"dst":DST]STEPS,"group":G,
//    "iifindex":I[INTERFACE][,"oifindex":O][,"nsid":N],"origSize":S,"rate":R,"probability":B
//    [,"cookie":"HEX"][,"datapath":DP],"samples":C[,"packet":{…},"data":"HEX"]}
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "packet/packet_decoder.h"
#include "wire/batch_record.h"

namespace ovnpsample {

// Bumped when a member changes meaning or goes away; new members may appear without it.
inline constexpr uint32_t kEventJsonVersion = 1;

// Byte strings by small integer id, set once each and copied into many lines.
class PieceTable {
 public:
  // Ids are dense (TypeScript counts them from 0 and starts over at clear()): past this the
  // table refuses them, so a caller that never clears cannot grow it without end (64 Ki pieces).
  static constexpr uint32_t kMaxPieces = 1u << 16;

  bool set(uint32_t id, std::string_view bytes);
  void clear() {
    pieces_.clear();
    set_.clear();
  }
  // The piece, or null when it was never set.
  const std::string* find(uint32_t id) const;

 private:
  std::vector<std::string> pieces_;
  std::vector<uint8_t> set_;
};

struct EventJsonLine {
  uint64_t timestamp_ns = 0;
  // `,"verdict":…,"message":…` and `,"chain":[…]`.
  std::string_view head;
  std::string_view steps;
  // Each absent when null: the endpoints' and the datapath's JSON, `,"interface":"NAME"`.
  const std::string* src = nullptr;
  const std::string* dst = nullptr;
  const std::string* interface = nullptr;
  const std::string* datapath = nullptr;
  uint32_t group = 0;
  uint32_t iifindex = 0;
  bool has_oifindex = false;
  uint32_t oifindex = 0;
  bool has_nsid = false;
  int32_t nsid = 0;
  uint32_t orig_size = 0;
  uint32_t rate = 0;
  bool probability = false;
  bool has_cookie = false;
  const uint8_t* cookie = nullptr;
  size_t cookie_length = 0;
  uint64_t samples = 0;
  // Absent (no `packet`, no `data`) when null: a source without the packet's bytes.
  const DecodedPacket* packet = nullptr;
};

// The line's sample parts from the first sample's record `r` in `b` (read_record read it):
// group, interfaces, namespace, sizes, rate, cookie, the kernel's time. The record's data is the
// packet's bytes.
void event_json_line_from_record(const Batch& b, const Record& r, EventJsonLine& line);

// Appends the line, '\n' included. `packet_json` is scratch room for the packet's JSON. `Out`: a
// std::string (appended to) or a LineOut (the caller's output itself, see line_out.h); compiled
// for both.
template <typename Out>
void append_event_json(Out& out, const EventJsonLine& line, std::string& packet_json);

// `YYYY-MM-DDTHH:MM:SS.NNNNNNNNNZ` of a time in ns since the epoch (UTC), as
// Date.prototype.toISOString() writes it with all nine digits.
template <typename Out>
void append_iso_time(Out& out, uint64_t timestamp_ns);

}  // namespace ovnpsample
