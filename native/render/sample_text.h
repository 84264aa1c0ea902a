// The text line of a psample message, written from its batch record (batch_record.h): THE
// implementation of the human line that `listen --format text`, `decode --format text` and
// formatSample(…, 'text') write. Pure C++ (no N-API); SampleLineRenderer (sample_lines.h) walks
// batches with it.
//
// A sample:      group=G[ nsid=N] in=I[ out=O][ app=A dp=D point=P | cookie=HEX] PACKET
// a group event: COMMAND group=G refcount=R|?
// each followed by the event's bytes when given (` | message`, written by the caller), ASCII but
// the event, never a newline.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "render/line_out.h"
#include "wire/batch_record.h"

namespace ovnpsample {

// The line of the record (no '\n'): `packet` is append_text_packet()'s bytes for a sample (empty
// for a group event), `event` the bytes that end the line when given.
// `Out`: a std::string (appended to) or a LineOut (the output itself); compiled for both.
template <typename Out>
void append_text_line(Out& out, const Batch& b, const Record& r, std::string_view packet,
                      const std::string_view* event);

// ` ` and the packet's description (packet_text.h).
void append_text_packet(std::string& out, const uint8_t* data, size_t length, uint16_t proto);

}  // namespace ovnpsample
