#include "render/sample_lines.h"

#include <cstring>

#include "render/line_out.h"
#include "render/sample_json.h"
#include "render/sample_text.h"
#include "wire/batch_layout.h"
#include "wire/batch_record.h"

namespace ovnpsample {

void EventTable::set(uint32_t obs_domain_id, uint32_t obs_point_id, std::string_view bytes) {
  by_ids_[uint64_t{obs_domain_id} << 32 | obs_point_id].assign(bytes);
}

void EventTable::set_for_cookie_length(uint32_t cookie_length, std::string_view bytes) {
  by_length_[cookie_length].assign(bytes);
}

void EventTable::clear() {
  by_ids_.clear();
  by_length_.clear();
}

const std::string* EventTable::find(uint32_t obs_domain_id, uint32_t obs_point_id) const {
  const auto found = by_ids_.find(uint64_t{obs_domain_id} << 32 | obs_point_id);
  return found == by_ids_.end() ? nullptr : &found->second;
}

const std::string* EventTable::find_for_cookie_length(uint32_t cookie_length) const {
  const auto found = by_length_.find(cookie_length);
  return found == by_length_.end() ? nullptr : &found->second;
}

const std::string& PacketFormCache::of(const uint8_t* data, size_t length, uint16_t proto) {
  if (!valid_ || proto_ != proto || data_.size() != length ||
      (length > 0 && std::memcmp(data_.data(), data, length) != 0)) {
    valid_ = false;
    proto_ = proto;
    data_.assign(data, data + length);
    form_.clear();
    writer_(form_, data, length, proto);
    valid_ = true;
  }
  return form_;
}

namespace {

// The whole line of a record in the format, without its '\n'.
template <typename Out>
void append_line_of(LineFormat format, Out& out, const Batch& b, const Record& r, const std::string_view* event,
                    PacketFormCache& packets) {
  std::string_view packet;
  if (r.is_sample()) {
    const auto proto = static_cast<uint16_t>(b.load<uint32_t>(r.at + layout::record::kOutTcProto) >> 16);
    packet = packets.of(r.data, r.data_length, proto);
  }
  if (format == LineFormat::kJson)
    append_json_line(out, b, r, packet, event);
  else
    append_text_line(out, b, r, packet, event);
}

}  // namespace

SampleLineRenderer::SampleLineRenderer(LineFormat format)
    : format_(format), packet_(format == LineFormat::kJson ? append_json_packet : append_text_packet) {}

bool SampleLineRenderer::append_line(const uint8_t* batch, size_t batch_size, size_t offset, bool little_endian,
                                     const std::string_view* event, std::string& out) {
  const Batch b{batch, batch_size, little_endian != layout::kLittleEndian};
  Record r;
  if (!read_record(b, offset, r)) return false;
  append_line_of(format_, out, b, r, event, packet_);
  return true;
}

RenderResult SampleLineRenderer::render(const RenderRequest& request, RenderCursor from, uint8_t* out,
                                        size_t capacity) {
  const Batch b{request.batch, request.batch_size, request.little_endian != layout::kLittleEndian};
  RenderResult result;
  result.next = from;
  while (result.next.index < request.count) {
    Record r;
    if (!read_record(b, result.next.offset, r)) {
      result.stop = RenderStop::kMalformed;
      return result;
    }
    if (!request.samples_only || r.is_sample()) {
      if (result.lines >= request.max_lines) {
        result.stop = RenderStop::kLineLimit;
        return result;
      }
      std::string_view event;
      if (request.with_events) {
        const std::string* found = r.cookie_length == kOvsCookieBytes
                                       ? events_.find(big_endian_u32(r.cookie), big_endian_u32(r.cookie + 4))
                                       : events_.find_for_cookie_length(r.cookie_length);
        if (found == nullptr) {
          result.stop = RenderStop::kMissingEvent;
          return result;
        }
        event = *found;
      }
      const std::string_view* line_event = request.with_events ? &event : nullptr;
      LineOut line(out + result.written, out + capacity);
      append_line_of(format_, line, b, r, line_event, packet_);
      line += '\n';
      if (line.overflowed()) {
        // Rare (once per chunk): what did not fit is written again, whole, to know its length.
        line_.clear();
        append_line_of(format_, line_, b, r, line_event, packet_);
        result.stop = RenderStop::kNoRoom;
        result.needed = line_.size() + 1;
        return result;
      }
      result.written += line.size();
      result.lines++;
    }
    result.next.index++;
    result.next.offset += r.length;
  }
  return result;
}

}  // namespace ovnpsample
