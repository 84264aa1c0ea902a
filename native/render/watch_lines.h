// watch's psample lines without a JavaScript object per packet: a delivered batch's samples
// grouped into packets (aggregate/packet_grouper.h, the grouping rule's one native definition),
// each released packet given its route, and the released packets' lines written in one call.
// A route is what a line's database parts and the filter's answer depend on: the psample group,
// the first sample's input interface, the samples' cookies in order, the addresses' texts and the
// fields a filter reads. JavaScript makes a route's chain, endpoints and filter answer once
// (src/output/native-event-lines.ts) and sets its parts here; the line itself is event_json.h's
// or, in the human format, event_human.h's.
// Routes live across releases until JavaScript forgets them (the decoder's or the pods' answers
// changed, or it holds as many as it keeps): then they are made again (ids go on counting, never
// reused).
// Pure C++17 (no N-API).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "aggregate/packet_grouper.h"
#include "packet/packet_fields.h"
#include "render/event_human.h"
#include "wire/batch_record.h"

// X(identifier, JavaScript name, slot) of a route's counts, as take_counts() leaves them.
#define OVNPSAMPLE_WATCH_ROUTE_COUNTS(X)     \
  X(kRouteId, id, 0)                         \
  X(kRouteSampledPackets, sampledPackets, 1) \
  X(kRoutePackets, packets, 2) /* packets on the wire they stand for (metrics) */

// X(identifier, JavaScript name, slot) of render()'s numbers: in, then out.
#define OVNPSAMPLE_WATCH_RENDER_SLOTS(X)                                                                   \
  X(kRenderAt, at, 0)           /* in: where the lines go in `out`; out: where they end */                 \
  X(kRenderLimit, limit, 1)     /* in: packets still to show (--count); the rest are counted, not shown */ \
  X(kRenderLeft, left, 2)       /* out: released packets not yet written (0: done) */                      \
  X(kRenderNeeded, needed, 3)   /* out: with `left`, the bytes the next line needs past `at` */            \
  X(kRenderPackets, packets, 4) /* out: packets released since the last take_counts() */                   \
  X(kRenderShown, shown, 5)                                                                                \
  X(kRenderFiltered, filtered, 6)                                                                          \
  X(kRenderMalformed, malformedRecords, 7) /* out: since the lines were made (packet_grouper.h) */         \
  X(kRenderPending, pending, 8)            /* out: packets waiting in the grouping window */               \
  X(kRenderClock, clockSecond, 9) /* out: with `left`, the second whose local time set_clock() must give, else -1 */

namespace ovnpsample {

namespace watch_lines {
#define OVNPSAMPLE_WATCH_SLOT(id, name, index) inline constexpr uint32_t id = index;
OVNPSAMPLE_WATCH_ROUTE_COUNTS(OVNPSAMPLE_WATCH_SLOT)
OVNPSAMPLE_WATCH_RENDER_SLOTS(OVNPSAMPLE_WATCH_SLOT)
#undef OVNPSAMPLE_WATCH_SLOT
inline constexpr uint32_t kCountSlots = 3;
inline constexpr uint32_t kRenderSlots = 10;
}  // namespace watch_lines

struct WatchLinesOptions {
  double group_window_ms = 50;
  // Keys the source port too (a --port filter reads it).
  bool by_source_port = false;
  // The human line (event_human.h) instead of the JSON line, coloured or not.
  bool human = false;
  bool color = false;
};

// The filter's answer and a route's parts of its line in the lines' format: the JSON line's
// (event_json.h's pieces: absent when empty) or the human line's (event_human.h's texts).
struct WatchRouteAnswer {
  bool accepted = false;
  std::string head;
  std::string steps;
  std::string src;
  std::string dst;
  std::string interface;
  std::string datapath;

  HumanLineTexts human;
};

struct WatchRoute {
  uint32_t id = 0;
  uint32_t group = 0;
  uint32_t iifindex = 0;
  // As GroupedPacket's: each cookie's length then its bytes; the first packet's words and texts.
  std::string cookies;
  uint32_t words[packet_fields::kWords] = {};
  std::string texts;
  bool answered = false;
  WatchRouteAnswer answer;
  // Since the last take_counts().
  double sampled_packets = 0;
  double packets = 0;
};

class WatchLines {
 public:
  explicit WatchLines(const WatchLinesOptions& options)
      : options_(options), grouper_(options.group_window_ms, true), columns_(options.color) {}

  // Releases the packets whose window passed by `now_ms`, then groups the batch's records (as
  // PacketGrouper::add). Returns the routes first seen: JavaScript answers them (answer()) before
  // render().
  const std::vector<uint32_t>& add(const Batch& batch, uint32_t count, double now_ms, double wall_ms);
  // Releases the packets whose window passed by `now_ms` (all of them when `final`).
  const std::vector<uint32_t>& release(double now_ms, bool final);
  // A route add() or release() returned (valid until the next of them).
  const WatchRoute& route(uint32_t index) const { return routes_[index]; }

  // False when no route has this id.
  bool answer(uint32_t id, WatchRouteAnswer answer);

  // Counts and writes the released packets' lines into [out + at, out_end) (slots in `n`,
  // watch_lines::kRenderSlots), as many whole lines as fit; called again with more room it goes
  // on where it stopped, or once set_clock() gave the second it asked for (human lines). The line
  // is event_json.h's or event_human.h's. False when a released
  // packet's route has no answer (the caller's bug).
  bool render(uint8_t* out, size_t out_length, double* n);

  // Calls visit(const WatchRoute&) for each route counted since the last call, then clears the
  // counts (render()'s packets, shown and filtered too).
  template <typename Visit>
  void take_counts(Visit&& visit) {
    for (const uint32_t index : touched_) {
      WatchRoute& route = routes_[index];
      visit(static_cast<const WatchRoute&>(route));
      route.sampled_packets = route.packets = 0;
    }
    touched_.clear();
    packets_ = shown_ = filtered_ = 0;
  }

  // The human line's local time of day of `second` (event_human.h), which render() asked for.
  void set_clock(uint64_t second, uint32_t seconds_of_day) { columns_.set_clock(second, seconds_of_day); }

  // The routes are made again from the next release on (the decoder's answers changed).
  void forget_routes() { forget_ = true; }

  size_t pending() const { return grouper_.pending(); }

 private:
  // A released packet waiting for its line: its route (an index in routes_) and what was judged.
  struct Released {
    GroupedPacket packet;
    uint32_t route = 0;
    bool judged = false;
    bool shown = false;
  };

  void start_release();
  void take(const GroupedPacket& packet);

  WatchLinesOptions options_;
  PacketGrouper grouper_;
  std::vector<Released> released_;
  size_t released_count_ = 0;
  size_t next_ = 0;

  std::vector<WatchRoute> routes_;
  std::unordered_map<std::string, uint32_t> index_;
  // Ids are dense from first_id_ since the routes were last made again.
  uint32_t first_id_ = 0;
  std::vector<uint32_t> fresh_;
  std::vector<uint32_t> touched_;
  uint32_t next_id_ = 0;
  bool forget_ = false;
  std::string key_;

  double packets_ = 0;
  double shown_ = 0;
  double filtered_ = 0;
  std::string packet_json_;
  std::string line_;
  HumanColumns columns_;
};

}  // namespace ovnpsample
