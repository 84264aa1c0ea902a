// The lines of a batch of psample records (batch_layout.h) in one output format, JSON
// (sample_json.h) or text (sample_text.h): one walk over the records for both, checked against
// the batch, with the OVN decoder's event of each cookie from a table. Pure C++ (no N-API) so it
// can be fuzzed and tested alone; the addon's LineRenderer (addon_render.cc) hands it batches and
// the events. Each line ends in '\n'.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ovnpsample {

enum class LineFormat : uint8_t { kJson, kText };

// The OVN decoder's events as the bytes the format writes for them (JSON: the event object;
// text: ` | message`), keyed the way OvnSampleDecoder.decodeSample() answers: by the observation
// ids of an 8-byte OVS cookie, else by the cookie's length (0: no cookie), whose samples all
// share one "not an OVN cookie" event.
class EventTable {
 public:
  void set(uint32_t obs_domain_id, uint32_t obs_point_id, std::string_view bytes);
  void set_for_cookie_length(uint32_t cookie_length, std::string_view bytes);
  void clear();
  size_t size() const { return by_ids_.size() + by_length_.size(); }

  const std::string* find(uint32_t obs_domain_id, uint32_t obs_point_id) const;
  const std::string* find_for_cookie_length(uint32_t cookie_length) const;

 private:
  std::unordered_map<uint64_t, std::string> by_ids_;
  std::unordered_map<uint32_t, std::string> by_length_;
};

// Why a render stopped.
enum class RenderStop : uint32_t {
  kEnd = 0,           // every record was walked
  kMissingEvent = 1,  // the record at the cursor needs an event the table does not have
  kLineLimit = 2,     // max_lines lines were written
  kNoRoom = 3,        // the record at the cursor's line does not fit in what is left of the output
  kMalformed = 4,     // the record at the cursor lies: its length or a range leaves the batch
};

struct RenderRequest {
  const uint8_t* batch = nullptr;
  size_t batch_size = 0;
  uint32_t count = 0;         // records in the batch, as the reader declared
  bool little_endian = true;  // the byte order of the batch's numbers (the host's, but in tests)
  bool samples_only = false;  // skip group events (they are walked, not written)
  bool with_events = false;   // every written line gets its event from the table
  uint64_t max_lines = UINT64_MAX;
};

// Where a walk is: the next record's index and byte offset.
struct RenderCursor {
  uint32_t index = 0;
  size_t offset = 0;
};

struct RenderResult {
  RenderStop stop = RenderStop::kEnd;
  RenderCursor next;   // the record the walk stopped at (count, batch end: kEnd)
  uint32_t lines = 0;  // lines written
  size_t written = 0;  // bytes written
  size_t needed = 0;   // kNoRoom: the bytes of the line that did not fit
};

// The packet's part of the previous sample's line: OVN samples one packet at several stages, so
// the next sample often carries the same bytes, whose form is then copied rather than made again.
class PacketFormCache {
 public:
  using Writer = void (*)(std::string& out, const uint8_t* data, size_t length, uint16_t proto);
  explicit PacketFormCache(Writer writer) : writer_(writer) {}

  // The writer's bytes for these packet bytes.
  const std::string& of(const uint8_t* data, size_t length, uint16_t proto);

 private:
  Writer writer_;
  bool valid_ = false;
  uint16_t proto_ = 0;
  std::vector<uint8_t> data_;
  std::string form_;
};

class SampleLineRenderer {
 public:
  explicit SampleLineRenderer(LineFormat format);

  LineFormat format() const { return format_; }
  EventTable& events() { return events_; }

  // Writes the lines of the records from `from` on into out[0, capacity), until one of the
  // RenderStop reasons. Every read is checked against the batch: a lying record stops the walk
  // (kMalformed), it never reads outside [batch, batch + batch_size).
  RenderResult render(const RenderRequest& request, RenderCursor from, uint8_t* out, size_t capacity);

  // Appends the line of the record at `offset` (without its '\n'), with `event` as its event
  // when not null. False, and nothing appended, when the record lies.
  bool append_line(const uint8_t* batch, size_t batch_size, size_t offset, bool little_endian,
                   const std::string_view* event, std::string& out);

 private:
  LineFormat format_;
  EventTable events_;
  PacketFormCache packet_;
  std::string line_;  // a line that did not fit in the output, written again to know its length
};

}  // namespace ovnpsample
