// The reader thread: drains the netlink socket into a bounded queue of SampleBatches while the
// JavaScript thread is busy, follows the psample family when it registers again, and counts
// every message it cannot deliver. No N-API here.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "socket/datagram_policy.h"
#include "socket/psample_socket.h"
#include "socket/setup_error.h"
#include "wire/batch_consumer.h"
#include "wire/psample_parser.h"
#include "wire/sample_batch.h"
#include "wire/socket_stats.h"

namespace ovnpsample {

struct ReceiveSlots;
using Clock = std::chrono::steady_clock;

// What the socket subscribes to now, for JavaScript.
struct Subscription {
  OpenedSocket socket;
  double last_gap_ms = -1;  // how long the last family gap lasted; -1: none, or its start was missed
};

class Reader final : private DatagramSink {
 public:
  // Called on the reader thread when batches (or new counts JavaScript reports) wait and JS was
  // not yet told.
  using Notify = std::function<void()>;

  // Opens the socket on a new thread (inside options.netns) and starts reading, handing samples
  // over every `delivery_interval` while they flow (zero: adaptive, see delivery_pace.h).
  // On failure returns nullptr and fills error.
  static std::shared_ptr<Reader> start(const SocketOptions& options, size_t queue_capacity, Notify notify,
                                       SetupError& error, Clock::duration delivery_interval = Clock::duration::zero());
  ~Reader();

  Subscription subscription();

  // JS thread: takes everything queued, fills `stats` and re-arms the notification.
  std::deque<std::unique_ptr<SampleBatch>> take(Stats& stats);
  // JS thread: from the next hand-off on, every batch (and what is still queued) goes to
  // `consumer` on this thread instead of JavaScript's queue, and is counted as received there.
  // JavaScript is then told only of new counts (drops, gaps, failure).
  void feed(std::shared_ptr<BatchConsumer> consumer);
  Stats stats();
  // Idempotent. Joins the thread, which first leaves every group and counts what the socket
  // still held; then counts what was queued for JavaScript, and closes the socket. The counters
  // stay readable.
  void stop();
  // After stop(): messages JavaScript had taken but not delivered when it closed the socket.
  void count_undelivered(uint64_t count);

 private:
  Reader(const SocketOptions& options, size_t queue_capacity, Clock::duration delivery_interval, Notify notify);
  void run(std::promise<SetupError>* ready);
  void read_loop(ReceiveSlots& slots);
  bool receive_some(ReceiveSlots& slots);
  void drain_for_close(ReceiveSlots& slots);
  void handle_datagram(const Datagram& datagram);
  // DatagramSink
  uint64_t queued_messages() const override { return queued_.load(std::memory_order_relaxed); }
  size_t queued_bytes() const override { return queued_bytes_.load(std::memory_order_relaxed); }
  SampleBatch& batch() override { return *building_; }
  void appended() override;
  bool take(const Message& message, const uint8_t* source) override;
  void follow_consumer();
  void handle_controller(const uint8_t* message, size_t len) override;
  void open_gap();
  void follow_family(const FamilyInfo& family);
  void verify_membership();
  void flush();
  void hand_to(BatchConsumer& consumer, const SampleBatch& batch);
  void check_socket_drops(bool now_anyway);
  void announce();
  void fail(int errnum);
  Stats snapshot(bool fresh) const;
  uint64_t unread_socket_drops() const;
  void signal_js();

  SocketOptions options_;
  const size_t queue_capacity_;
  const Clock::duration delivery_interval_;
  Notify notify_;
  int wake_fd_ = -1;
  std::thread thread_;
  std::once_flag stopped_;
  std::atomic<bool> stopping_{false};

  // reader-thread only (socket_ is also written by it alone, under mutex_)
  std::vector<Message> parsed_;
  std::unique_ptr<SampleBatch> building_;
  // The consumer this thread feeds (consumer_ as of the last read's start), and whether it holds
  // it for the datagrams being handled.
  std::shared_ptr<BatchConsumer> feeding_;
  bool run_open_ = false;
  Stats counting_{};
  Stats announced_{};  // the counts JavaScript reacts to, as last signalled
  bool closing_ = false;
  bool gap_open_ = false;
  Clock::time_point gap_start_;
  uint64_t window_messages_ = 0;  // messages queued for JavaScript in this delivery interval
  bool drops_unchecked_ = false;  // samples came since SO_MEMINFO was last read
  Clock::time_point next_drop_check_;

  mutable std::mutex mutex_;  // guards everything below
  OpenedSocket socket_;
  double last_gap_ms_ = -1;
  uint32_t last_socket_drops_ = 0;
  std::deque<std::unique_ptr<SampleBatch>> queue_;
  std::shared_ptr<BatchConsumer> consumer_;
  Stats published_{};
  std::atomic<uint64_t> queued_{0};
  std::atomic<size_t> queued_bytes_{0};
  std::atomic<bool> js_notified_{false};
  std::atomic<int> failure_errno_{0};
};

}  // namespace ovnpsample
