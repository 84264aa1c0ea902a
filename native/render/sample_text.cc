#include "render/sample_text.h"

#include "packet/packet_text.h"
#include "render/line_out.h"
#include "wire/batch_layout.h"

namespace ovnpsample {

namespace {

namespace record = layout::record;

template <typename Out>
void append_fields(Out& out, const Batch& b, const Record& r) {
  const size_t at = r.at;
  out += "group=";
  append_number(out, b.load<uint32_t>(at + record::kGroup));
  if (r.flag(record::kFlagNsid)) {
    out += " nsid=";
    append_number(out, static_cast<int32_t>(b.load<uint32_t>(at + record::kNsid)));
  }
  const uint32_t ifindexes = b.load<uint32_t>(at + record::kIfindexes);
  out += " in=";
  append_number(out, ifindexes & 0xffff);
  if (r.has(kAttrOifindex)) {
    out += " out=";
    append_number(out, ifindexes >> 16);
  }
  if (r.cookie_length == kOvsCookieBytes) {
    const uint32_t domain = big_endian_u32(r.cookie);
    out += " app=";
    append_number(out, domain >> 24);
    out += " dp=";
    append_number(out, domain & 0xffffff);
    out += " point=";
    append_number(out, big_endian_u32(r.cookie + 4));
  } else if (r.cookie_length > 0) {
    out += " cookie=";
    append_hex(out, r.cookie, r.cookie_length);
  }
}

}  // namespace

template <typename Out>
void append_text_line(Out& out, const Batch& b, const Record& r, std::string_view packet,
                      const std::string_view* event) {
  if (r.is_sample()) {
    append_fields(out, b, r);
    out += packet;
  } else {
    out += r.command_name();
    out += " group=";
    append_number(out, b.load<uint32_t>(r.at + record::kGroup));
    out += " refcount=";
    if (r.has(kAttrGroupRefcount))
      append_number(out, b.load<uint32_t>(r.at + record::kGroupRefcount));
    else
      out += '?';
  }
  if (event != nullptr) out += *event;
}

template void append_text_line(std::string&, const Batch&, const Record&, std::string_view, const std::string_view*);
template void append_text_line(LineOut&, const Batch&, const Record&, std::string_view, const std::string_view*);

void append_text_packet(std::string& out, const uint8_t* data, size_t length, uint16_t proto) {
  out += ' ';
  append_packet_text(out, data, length, proto);
}

}  // namespace ovnpsample
