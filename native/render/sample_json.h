// The JSON line of a psample message, written from its batch record (batch_record.h): THE
// implementation of the sample JSON that `listen --format json`, `decode` and the library's
// sampleJson() write. Pure C++ (no N-API); SampleLineRenderer (sample_lines.h) walks batches
// with it.
//
// One line is one JSON object, members in this order, absent ones left out as JSON.stringify
// leaves out undefined: command, group, groupSeq, iifindex, oifindex, origSize, rate,
// probability, timestampNs, latencyNs, outTc, outTcOcc, proto, data, userCookie, groupRefcount,
// tunnel, nsid, obsDomainId, obsPointId, ovn {appId, datapathKey} (an 8-byte cookie), packet (a
// sample, not a group event), event (the decoder's, when given). 64-bit numbers are decimal
// strings (they exceed 2^53), bytes lowercase hex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "render/line_out.h"
#include "wire/batch_record.h"

namespace ovnpsample {

// The line of the record (no '\n'): `packet` is append_json_packet()'s bytes for a sample (empty
// for a group event), `event` the event's JSON when given.
// `Out`: a std::string (appended to) or a LineOut (the output itself); compiled for both.
template <typename Out>
void append_json_line(Out& out, const Batch& b, const Record& r, std::string_view packet,
                      const std::string_view* event);

// `,"packet":{…}` of the sampled bytes.
void append_json_packet(std::string& out, const uint8_t* data, size_t length, uint16_t proto);

}  // namespace ovnpsample
