#include "render/event_json.h"

#include "packet/packet_json.h"
#include "render/line_out.h"

namespace ovnpsample {

bool PieceTable::set(uint32_t id, std::string_view bytes) {
  if (id >= kMaxPieces) return false;
  if (id >= pieces_.size()) {
    pieces_.resize(id + 1);
    set_.resize(id + 1);
  }
  pieces_[id].assign(bytes);
  set_[id] = 1;
  return true;
}

void event_json_line_from_record(const Batch& b, const Record& r, EventJsonLine& line) {
  const size_t at = r.at;
  line.group = b.load<uint32_t>(at + layout::record::kGroup);
  const uint32_t ifindexes = b.load<uint32_t>(at + layout::record::kIfindexes);
  line.iifindex = ifindexes & 0xffff;
  line.has_oifindex = r.has(kAttrOifindex);
  line.oifindex = ifindexes >> 16;
  line.has_nsid = r.flag(layout::record::kFlagNsid);
  line.nsid = static_cast<int32_t>(b.load<uint32_t>(at + layout::record::kNsid));
  line.orig_size = b.load<uint32_t>(at + layout::record::kOrigsize);
  line.rate = b.load<uint32_t>(at + layout::record::kRate);
  line.probability = r.flag(layout::record::kFlagProbability);
  line.has_cookie = r.cookie_length > 0;
  line.cookie = r.cookie;
  line.cookie_length = r.cookie_length;
  line.timestamp_ns = b.load<uint64_t>(at + layout::record::kTimestamp);
}

const std::string* PieceTable::find(uint32_t id) const {
  return id < pieces_.size() && set_[id] != 0 ? &pieces_[id] : nullptr;
}

namespace {

template <typename Out>
void two_digits(Out& out, uint32_t value) {
  out += std::string_view(kDigitPairs + 2 * value, 2);
}

// Days since 1970-01-01 as a proleptic Gregorian date (Howard Hinnant's days_from_civil, inverted).
void civil_from_days(uint64_t days, uint32_t& year, uint32_t& month, uint32_t& day) {
  const uint64_t z = days + 719468;
  const uint64_t era = z / 146097;
  const uint64_t doe = z - era * 146097;
  const uint64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const uint64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const uint64_t mp = (5 * doy + 2) / 153;
  day = static_cast<uint32_t>(doy - (153 * mp + 2) / 5 + 1);
  month = static_cast<uint32_t>(mp < 10 ? mp + 3 : mp - 9);
  year = static_cast<uint32_t>(yoe + era * 400 + (month <= 2 ? 1 : 0));
}

}  // namespace

template <typename Out>
void append_iso_time(Out& out, uint64_t timestamp_ns) {
  // 2^64 ns is in the year 2554: four digits of year always.
  const uint64_t seconds = timestamp_ns / 1000000000;
  const auto nanoseconds = static_cast<uint32_t>(timestamp_ns % 1000000000);
  uint32_t year = 0;
  uint32_t month = 0;
  uint32_t day = 0;
  civil_from_days(seconds / 86400, year, month, day);
  const auto in_day = static_cast<uint32_t>(seconds % 86400);
  two_digits(out, year / 100);
  two_digits(out, year % 100);
  out += '-';
  two_digits(out, month);
  out += '-';
  two_digits(out, day);
  out += 'T';
  two_digits(out, in_day / 3600);
  out += ':';
  two_digits(out, in_day / 60 % 60);
  out += ':';
  two_digits(out, in_day % 60);
  out += '.';
  char digits[10];
  write_decimal(digits, nanoseconds + uint64_t{1000000000}, 10);
  out += std::string_view(digits + 1, 9);
  out += 'Z';
}

template <typename Out>
void append_event_json(Out& out, const EventJsonLine& line, std::string& packet_json) {
  out += "{\"version\":";
  append_number(out, kEventJsonVersion);
  out += ",\"time\":\"";
  append_iso_time(out, line.timestamp_ns);
  out += "\",\"timestampNs\":\"";
  append_number(out, line.timestamp_ns);
  out += '"';
  out += line.head;
  if (line.src != nullptr) {
    out += ",\"src\":";
    out += *line.src;
  }
  if (line.dst != nullptr) {
    out += ",\"dst\":";
    out += *line.dst;
  }
  out += line.steps;
  out += ",\"group\":";
  append_number(out, line.group);
  out += ",\"iifindex\":";
  append_number(out, line.iifindex);
  if (line.interface != nullptr) out += *line.interface;
  if (line.has_oifindex) {
    out += ",\"oifindex\":";
    append_number(out, line.oifindex);
  }
  if (line.has_nsid) {
    out += ",\"nsid\":";
    append_number(out, line.nsid);
  }
  out += ",\"origSize\":";
  append_number(out, line.orig_size);
  out += ",\"rate\":";
  append_number(out, line.rate);
  out += line.probability ? ",\"probability\":true" : ",\"probability\":false";
  if (line.has_cookie) {
    out += ",\"cookie\":\"";
    append_hex(out, line.cookie, line.cookie_length);
    out += '"';
  }
  if (line.datapath != nullptr) {
    out += ",\"datapath\":";
    out += *line.datapath;
  }
  out += ",\"samples\":";
  append_number(out, line.samples);
  if (line.packet != nullptr) {
    out += ",\"packet\":";
    packet_json.clear();
    append_packet_json(packet_json, *line.packet);
    out += packet_json;
    out += ",\"data\":\"";
    append_hex(out, line.packet->data, line.packet->length);
    out += '"';
  }
  out += "}\n";
}

template void append_iso_time(std::string&, uint64_t);
template void append_iso_time(LineOut&, uint64_t);
template void append_event_json(std::string&, const EventJsonLine&, std::string&);
template void append_event_json(LineOut&, const EventJsonLine&, std::string&);

}  // namespace ovnpsample
