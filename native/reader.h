// The reader thread: drains the netlink socket into a bounded queue of SampleBatches while the
// JavaScript thread is busy, and counts every message it cannot deliver. No N-API here.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "psample_parser.h"
#include "psample_socket.h"
#include "sample_batch.h"
#include "setup_error.h"

namespace ovnpsample {

struct ReaderStats {
  uint64_t received = 0;  // messages handed to JavaScript
  uint64_t datagrams = 0;
  uint64_t kernel_drops = 0;
  uint64_t enobufs = 0;
  uint64_t queue_drops = 0;
  uint64_t malformed = 0;
  uint64_t unknown_attributes = 0;
  uint64_t foreign = 0;
  uint64_t rejected_sender = 0;
  uint64_t swapped_layout = 0;
  uint64_t filtered_out = 0;
  uint64_t control_messages = 0;
  uint64_t queued = 0;
  int failure_errno = 0;  // the reader stopped on this socket error
};

// What JavaScript needs on every delivery to report drops and failure, without a stats() call.
struct DeliveryCounters {
  uint64_t kernel_drops = 0;
  uint64_t queue_drops = 0;
  int failure_errno = 0;
};

class Reader {
 public:
  // Called on the reader thread when batches (or new drop counts) wait and JS was not yet told.
  using Notify = std::function<void()>;

  // Opens the socket on a new thread (inside options.netns) and starts reading.
  // On failure returns nullptr and fills error.
  static std::shared_ptr<Reader> start(const SocketOptions& options, size_t queue_capacity, Notify notify,
                                       SetupError& error);
  ~Reader();

  const OpenedSocket& socket() const { return socket_; }

  // JS thread: takes everything queued and re-arms the notification.
  std::deque<std::unique_ptr<SampleBatch>> take(DeliveryCounters& counters);
  ReaderStats stats();
  // Idempotent; joins the thread and closes the socket.
  void stop();

 private:
  Reader(const SocketOptions& options, size_t queue_capacity, Notify notify);
  void run(std::promise<SetupError>* ready);
  void read_loop();
  void handle_datagram(const uint8_t* data, size_t len, bool from_kernel_port, bool has_nsid, int32_t nsid);
  void flush(bool force);
  void publish_drops();
  void fail(int errnum);
  uint64_t unread_socket_drops() const;
  void signal_js();

  SocketOptions options_;
  const size_t queue_capacity_;
  Notify notify_;
  OpenedSocket socket_;
  int wake_fd_ = -1;
  std::thread thread_;
  std::once_flag stopped_;
  std::atomic<bool> stopping_{false};

  // reader-thread only
  std::vector<Message> parsed_;
  std::unique_ptr<SampleBatch> building_;
  ParseCounters parse_;
  uint64_t datagrams_ = 0, enobufs_ = 0, rejected_sender_ = 0, filtered_out_ = 0, control_ = 0;
  uint32_t last_socket_drops_ = 0;

  std::mutex mutex_;  // guards everything below
  std::deque<std::unique_ptr<SampleBatch>> queue_;
  ReaderStats published_;
  std::atomic<uint64_t> queued_{0};
  std::atomic<size_t> queued_bytes_{0};
  std::atomic<uint64_t> queue_drops_{0};
  std::atomic<bool> js_notified_{false};
  std::atomic<int> failure_errno_{0};
};

}  // namespace ovnpsample
