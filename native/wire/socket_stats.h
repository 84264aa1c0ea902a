// Every number a psample socket reports (PsampleSocket.stats()), defined once, here.
// The parser, the reader thread and the addon count into one Stats array indexed by Stat; the
// addon exports the names and docs in this order (abi.stats); scripts/generate-native-abi.mjs
// writes them into src/native/abi.generated.ts, from which the PsampleStats type is derived, and
// the JavaScript side checks at load time that the addon it got agrees.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

// X(identifier, JavaScript name, documentation)
// kReceived is counted by the JavaScript side, the only one that knows what it delivered, and by
// the reader thread for what it hands to a consumer of its own (wire/batch_consumer.h).
#define OVNPSAMPLE_SOCKET_STATS(X)                                                                                    \
  X(kReceived, received,                                                                                              \
    "Messages delivered to listeners and iterators, or to watch --aggregate's native flow table (samples and group "  \
    "events).")                                                                                                       \
  X(kDatagrams, datagrams, "Datagrams read from the socket.")                                                         \
  X(kKernelDrops, kernelDrops, "Messages the kernel dropped because the receive buffer was full (SK_MEMINFO_DROPS).") \
  X(kEnobufs, enobufs, "Times the kernel reported ENOBUFS on receive.")                                               \
  X(kQueueDrops, queueDrops, "Messages read but dropped because the queue towards JavaScript was full.")              \
  X(kCloseDiscards, closeDiscards,                                                                                    \
    "Messages still in the socket, in the reader's queue or not yet emitted when close() was called: "                \
    "counted, never delivered.")                                                                                      \
  X(kMalformed, malformed, "Messages rejected as truncated or garbled.")                                              \
  X(kUnknownAttributes, unknownAttributes, "Attributes skipped because their type is unknown to this version.")       \
  X(kForeign, foreign, "Messages of another netlink family on the socket.")                                           \
  X(kRejectedSender, rejectedSender, "Messages from a userspace sender where only the kernel may send.")              \
  X(kSwappedLayout, swappedLayout, "Messages in the swapped attribute order of unfixed 5.8-5.11 kernels.")            \
  X(kFilteredOut, filteredOut, "Samples of unwanted groups that reached userspace and were discarded there.")         \
  X(kControlMessages, controlMessages,                                                                                \
    "Netlink control messages (NLMSG_ERROR / NLMSG_DONE / NLMSG_OVERRUN) and generic-netlink controller "             \
    "notifications (families and multicast groups coming and going).")                                                \
  X(kFamilyGaps, familyGaps,                                                                                          \
    "Times the psample family was unregistered (module unloaded, Open vSwitch upgrade): from then until "             \
    "the socket rejoins, no sample can reach it.")                                                                    \
  X(kRejoins, rejoins, "Times the socket joined the packets group of a re-registered psample family.")                \
  X(kQueued, queued, "Messages waiting in the queue towards JavaScript right now.")                                   \
  X(kFailureErrno, failureErrno,                                                                                      \
    "The errno the reader thread stopped on (0 while healthy); the socket then closes with a SOCKET_ERROR.")

namespace ovnpsample {

enum Stat : size_t {
#define OVNPSAMPLE_STAT_ENUM(id, name, doc) id,
  OVNPSAMPLE_SOCKET_STATS(OVNPSAMPLE_STAT_ENUM)
#undef OVNPSAMPLE_STAT_ENUM
      kStatCount
};

using Stats = std::array<uint64_t, kStatCount>;

struct StatInfo {
  const char* name;
  const char* doc;
};

inline constexpr StatInfo kStatInfo[kStatCount] = {
#define OVNPSAMPLE_STAT_INFO(id, name, doc) {#name, doc},
    OVNPSAMPLE_SOCKET_STATS(OVNPSAMPLE_STAT_INFO)
#undef OVNPSAMPLE_STAT_INFO
};

}  // namespace ovnpsample
