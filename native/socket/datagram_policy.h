// What becomes of each datagram the reader thread receives, decided once, here: who may send
// it, which of its messages are delivered, and as what every other message is counted. Pure (no
// system calls, no N-API), so it is unit-tested and fuzzed with the parser and the batch writer;
// the reader thread supplies what it owns (the queue, the batch being built, the family it
// follows) through DatagramSink.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "wire/psample_parser.h"
#include "wire/sample_batch.h"
#include "wire/socket_stats.h"

namespace ovnpsample {

struct DatagramPolicy {
  bool kernel_only;                     // a real psample socket: only the kernel (port 0) sends
  const std::vector<uint32_t>& groups;  // SAMPLE_GROUP ids to keep; empty keeps all
  uint16_t family_id;                   // the psample family's netlink message type
  bool closing;                         // close(): what still arrives is counted, never delivered
  size_t queue_capacity;                // messages towards JavaScript, the batch being built included
  size_t queue_bytes_limit;             // their bytes, likewise
};

// One datagram as the socket returned it.
struct Datagram {
  const uint8_t* data;
  size_t length;
  bool truncated;  // MSG_TRUNC: larger than the receive slot
  bool from_kernel_port;
  bool has_nsid;  // NETLINK_LISTEN_ALL_NSID: a copy from a peer namespace
  int32_t nsid;
};

// The reader thread's side of the policy.
class DatagramSink {
 public:
  // Messages and bytes waiting in the queue towards JavaScript, the batch being built excluded.
  virtual uint64_t queued_messages() const = 0;
  virtual size_t queued_bytes() const = 0;
  // The batch messages are appended to; appended() may hand it over and start another.
  virtual SampleBatch& batch() = 0;
  virtual void appended() = 0;
  // Fed mode (wire/batch_consumer.h): takes a delivered message straight from its datagram
  // instead of the batch, before appended(); false: append it to batch().
  virtual bool take(const Message& /*message*/, const uint8_t* /*source*/) { return false; }
  // A generic-netlink controller notification of this socket's own namespace, not closing.
  virtual void handle_controller(const uint8_t* message, size_t len) = 0;

 protected:
  ~DatagramSink() = default;
};

// Counts the datagram and each of its messages into `counting` (kDatagrams, kMalformed,
// kRejectedSender, kControlMessages, kFilteredOut, kCloseDiscards, kQueueDrops and what the
// parser counts), and gives the samples and group events it delivers to sink.take(), or appends
// them to sink.batch().
// `parsed` is scratch space, kept by the caller so that it is not allocated per datagram.
void handle_datagram(const DatagramPolicy& policy, const Datagram& datagram, std::vector<Message>& parsed,
                     Stats& counting, DatagramSink& sink);

}  // namespace ovnpsample
