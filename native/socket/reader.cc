#include "socket/reader.h"

#include "socket/delivery_pace.h"

#include <linux/netlink.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <system_error>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

namespace ovnpsample {

namespace {

// A psample message is bounded by its 16-bit DATA attribute: 64 KiB plus the other attributes.
constexpr size_t kSlotBytes = 68 * 1024;
constexpr unsigned kSlots = 64;
// A batch is handed over early once it reaches this size: a sample JavaScript keeps keeps its
// whole batch's buffer alive, so this (plus one message) bounds what one kept sample can hold,
// as the size of a stream's chunks does.
constexpr size_t kBatchBytes = 64 * 1024;
// Bounds the queue's memory whatever the message sizes (queue_capacity_ bounds their number).
constexpr size_t kQueueBytesLimit = size_t{512} << 20;
// The kernel's drop counter (SO_MEMINFO) is read at most this often while samples flow, and
// once after they stop.
constexpr auto kDropCheckInterval = std::chrono::milliseconds(50);

}  // namespace

struct ReceiveSlots {
  std::vector<uint8_t> buffers = std::vector<uint8_t>(kSlots * kSlotBytes);
  iovec iov[kSlots];
  sockaddr_nl senders[kSlots];
  alignas(cmsghdr) uint8_t control[kSlots][CMSG_SPACE(sizeof(int)) * 2];
  mmsghdr headers[kSlots];

  void rearm() {
    for (unsigned i = 0; i < kSlots; i++) {
      iov[i] = {buffers.data() + i * kSlotBytes, kSlotBytes};
      msghdr& h = headers[i].msg_hdr;
      h.msg_name = &senders[i];
      h.msg_namelen = sizeof senders[i];
      h.msg_iov = &iov[i];
      h.msg_iovlen = 1;
      h.msg_control = control[i];
      h.msg_controllen = sizeof control[i];
      h.msg_flags = 0;
      headers[i].msg_len = 0;
    }
  }
};

namespace {

// Holds the fed consumer for one read's datagrams (BatchConsumer::open_run), and lets go of it
// whatever their handling throws.
class FedRun {
 public:
  FedRun(BatchConsumer* consumer, bool& open) : consumer_(consumer), open_(open) {
    open_ = consumer_ != nullptr && consumer_->open_run();
  }
  ~FedRun() {
    if (open_) consumer_->close_run();
    open_ = false;
  }
  FedRun(const FedRun&) = delete;
  FedRun& operator=(const FedRun&) = delete;

 private:
  BatchConsumer* consumer_;
  bool& open_;
};

bool find_nsid(msghdr& h, int32_t& nsid) {
  for (cmsghdr* c = CMSG_FIRSTHDR(&h); c != nullptr; c = CMSG_NXTHDR(&h, c)) {
    if (c->cmsg_level == SOL_NETLINK && c->cmsg_type == NETLINK_LISTEN_ALL_NSID &&
        c->cmsg_len >= CMSG_LEN(sizeof(int))) {
      std::memcpy(&nsid, CMSG_DATA(c), sizeof nsid);
      return true;
    }
  }
  return false;
}

}  // namespace

Reader::Reader(const SocketOptions& options, size_t queue_capacity, Clock::duration delivery_interval, Notify notify)
    : options_(options),
      queue_capacity_(queue_capacity),
      delivery_interval_(delivery_interval),
      notify_(std::move(notify)) {}

std::shared_ptr<Reader> Reader::start(const SocketOptions& options, size_t queue_capacity, Notify notify,
                                      SetupError& error, Clock::duration delivery_interval) {
  std::shared_ptr<Reader> reader(new Reader(options, queue_capacity, delivery_interval, std::move(notify)));
  reader->wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (reader->wake_fd_ < 0) {
    error = setup_error("SOCKET_ERROR", describe_errno("eventfd", errno), errno);
    return nullptr;
  }
  std::promise<SetupError> ready;
  auto opened = ready.get_future();
  try {
    reader->thread_ = std::thread(&Reader::run, reader.get(), &ready);
  } catch (const std::system_error& e) {
    error = setup_error("SOCKET_ERROR", std::string("cannot start the reader thread: ") + e.what() +
                                            " (check the process and cgroup thread limits)");
    reader->stop();
    return nullptr;
  }
  error = opened.get();
  if (error.failed()) {
    reader->stop();
    return nullptr;
  }
  return reader;
}

Reader::~Reader() { stop(); }

void Reader::stop() {
  std::call_once(stopped_, [this] {
    stopping_.store(true);
    if (wake_fd_ >= 0) {
      uint64_t one = 1;
      (void)!write(wake_fd_, &one, sizeof one);
    }
    if (thread_.joinable()) thread_.join();
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& batch : queue_) published_[kCloseDiscards] += batch->count;
    queue_.clear();
    queued_.store(0);
    queued_bytes_.store(0);
    if (socket_.fd >= 0) close(socket_.fd);
    if (wake_fd_ >= 0) close(wake_fd_);
    socket_.fd = wake_fd_ = -1;
  });
}

void Reader::count_undelivered(uint64_t count) {
  std::lock_guard<std::mutex> lock(mutex_);
  published_[kCloseDiscards] += count;
}

namespace {

// How far ahead of the process's other threads the reader asks to run. What it does not read in
// time overflows the kernel's receive buffer, lost for good; JavaScript falling behind only
// queues samples (within the queue's capacity) until it catches up. So when both want the CPU
// (a flood on a busy node), the reader goes first where the process may raise a thread's
// priority (CAP_SYS_NICE, or RLIMIT_NICE); elsewhere it keeps the process's niceness.
constexpr int kReaderNicenessAhead = 10;

void run_ahead_of_javascript() {
  // The system call, not glibc's gettid() (2.30): the x64 prebuild keeps its glibc 2.14 floor.
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  errno = 0;
  const int niceness = getpriority(PRIO_PROCESS, tid);
  if (errno != 0) return;
  setpriority(PRIO_PROCESS, tid, std::max(niceness - kReaderNicenessAhead, -20));  // refused: as it was
}

}  // namespace

void Reader::run(std::promise<SetupError>* ready) {
  // Named so that top -H, perf and /proc tell its CPU from Node's own threads.
  pthread_setname_np(pthread_self(), "psample-reader");
  run_ahead_of_javascript();
  OpenedSocket opened;
  SetupError error = open_psample_socket(options_, opened);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    socket_ = opened;
  }
  const bool failed = error.failed();
  ready->set_value(std::move(error));  // `ready` dies with start()'s frame once this returns
  if (failed) return;

  try {
    building_ = std::make_unique<SampleBatch>();
    auto slots = std::make_unique<ReceiveSlots>();
    read_loop(*slots);
    drain_for_close(*slots);
  } catch (const std::bad_alloc&) {
    fail(ENOMEM);  // JS closes the socket and reports it; nothing may escape a thread
  }
}

namespace {

// Waits until `fd` (or, with `also` >= 0, either) is readable or `deadline` (none: forever)
// passes; returns as ppoll() does and fills each descriptor's revents.
int wait_readable(int fd, int also, const Clock::time_point* deadline, short& fd_events, short& also_events) {
  pollfd fds[2] = {{fd, POLLIN, 0}, {also, POLLIN, 0}};
  timespec timeout{};
  if (deadline != nullptr) {
    const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(*deadline - Clock::now()).count();
    timeout.tv_sec = left > 0 ? static_cast<time_t>(left / 1'000'000'000) : 0;
    timeout.tv_nsec = left > 0 ? static_cast<long>(left % 1'000'000'000) : 0;
  }
  const int n = ppoll(fds, also >= 0 ? 2 : 1, deadline != nullptr ? &timeout : nullptr, nullptr);
  fd_events = fds[0].revents;
  also_events = fds[1].revents;
  return n;
}

}  // namespace

// Two modes. Idle: sleep until the socket is readable (an idle socket costs nothing). Flowing:
// sleep one delivery interval, read everything the socket gathered meanwhile, hand it over as
// one batch, and go on until an interval brings nothing.
void Reader::read_loop(ReceiveSlots& slots) {
  bool flowing = false;
  DeliveryPace pace(delivery_interval_);  // kept while idle: the rate often resumes
  Clock::time_point last_read;
  Clock::time_point next_read;
  while (!stopping_.load(std::memory_order_relaxed) && failure_errno_.load() == 0) {
    short socket_events = 0;
    short wake_events = 0;
    const Clock::time_point* deadline = flowing ? &next_read : drops_unchecked_ ? &next_drop_check_ : nullptr;
    const int ready = flowing ? wait_readable(wake_fd_, -1, deadline, wake_events, socket_events)
                              : wait_readable(socket_.fd, wake_fd_, deadline, socket_events, wake_events);
    if (ready < 0) {
      if (errno == EINTR) continue;
      fail(errno);
      break;
    }
    if (wake_events != 0) break;
    if (!flowing) {
      if (socket_events != 0) {
        flowing = true;  // gather one interval's samples before the first read
        last_read = Clock::now();
        next_read = last_read + pace.interval();
      } else {
        check_socket_drops(true);  // traffic stopped: its last drops
        announce();
      }
      continue;
    }
    const uint64_t before = counting_[kDatagrams];
    window_messages_ = 0;
    follow_consumer();
    while (receive_some(slots)) {
      if (stopping_.load(std::memory_order_relaxed)) break;
    }
    flush();
    flowing = counting_[kDatagrams] != before;
    const Clock::time_point now = Clock::now();
    pace.observe(window_messages_, now - last_read);
    last_read = now;
    next_read += pace.interval();
    if (next_read < now) next_read = now + pace.interval();  // a long read must not bunch the next ones
    if (flowing) drops_unchecked_ = true;
    check_socket_drops(false);
    announce();
  }
}

// One recvmmsg of whatever the socket holds, without blocking; false once it is empty (a short
// read says so without another call) or failed.
bool Reader::receive_some(ReceiveSlots& slots) {
  slots.rearm();
  int n = recvmmsg(socket_.fd, slots.headers, kSlots, MSG_DONTWAIT, nullptr);
  if (n < 0) {
    if (errno == EINTR) return true;
    if (errno == ENOBUFS) {
      counting_[kEnobufs]++;
      verify_membership();
      return true;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) fail(errno);
    return false;
  }
  FedRun run(closing_ ? nullptr : feeding_.get(), run_open_);
  for (int i = 0; i < n; i++) {
    msghdr& h = slots.headers[i].msg_hdr;
    int32_t nsid = 0;
    const bool has_nsid = options_.listen_all_nsid && find_nsid(h, nsid);
    handle_datagram({slots.buffers.data() + i * kSlotBytes, slots.headers[i].msg_len, (h.msg_flags & MSG_TRUNC) != 0,
                     slots.senders[i].nl_pid == 0, has_nsid, nsid});
  }
  return static_cast<unsigned>(n) == kSlots;
}

// Close: once out of every group nothing more arrives, so what the socket still holds is a known
// quantity. Each message in it is read and counted (as the sample it would have been, or as the
// malformed or foreign message it is); none is delivered.
void Reader::drain_for_close(ReceiveSlots& slots) {
  closing_ = true;
  leave_groups(socket_);
  counting_[kCloseDiscards] += building_->count;
  building_ = std::make_unique<SampleBatch>();
  while (receive_some(slots)) {
  }
  check_socket_drops(true);
  std::lock_guard<std::mutex> lock(mutex_);
  published_ = counting_;
}

void Reader::handle_datagram(const Datagram& datagram) {
  const DatagramPolicy policy{options_.protocol == SourceProtocol::kKernelPsample,
                              options_.groups,
                              socket_.family_id,
                              closing_,
                              queue_capacity_,
                              kQueueBytesLimit};
  ovnpsample::handle_datagram(policy, datagram, parsed_, counting_, *this);
}

bool Reader::take(const Message& message, const uint8_t* source) {
  if (!feeding_) return false;
  if (run_open_) {
    feeding_->take(message, source);
    counting_[kReceived]++;
  } else {
    counting_[kCloseDiscards]++;
  }
  return true;
}

// From a consumer's first read on, the messages go to it straight from the receive buffers; what
// was queued or built for JavaScript before it came is handed to it first, in order.
void Reader::follow_consumer() {
  std::shared_ptr<BatchConsumer> consumer;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    consumer = consumer_;
  }
  if (consumer == feeding_) return;
  flush();
  feeding_ = std::move(consumer);
}

void Reader::appended() {
  window_messages_++;
  if (building_->size() >= kBatchBytes) flush();
}

// Queues the batch being built, if any (or hands it to the consumer, with what was queued before
// it came), and publishes every count but the kernel's drops.
void Reader::flush() {
  std::shared_ptr<BatchConsumer> consumer;
  std::deque<std::unique_ptr<SampleBatch>> backlog;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    consumer = consumer_;
    if (consumer && !queue_.empty()) {
      backlog.swap(queue_);
      queued_.store(0);
      queued_bytes_.store(0);
    }
  }
  if (consumer) {
    for (const auto& batch : backlog) hand_to(*consumer, *batch);
    if (building_->count > 0) {
      hand_to(*consumer, *building_);
      building_->bytes.clear();  // keeps its room: the next batch is alike
      building_->count = 0;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    published_ = counting_;
    return;
  }
  const bool has_batch = building_->count > 0;
  const size_t size = building_->size();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (has_batch) {
      queued_.fetch_add(building_->count);
      queued_bytes_.fetch_add(size);
      queue_.push_back(std::move(building_));
    }
    published_ = counting_;
  }
  if (has_batch) {
    building_ = std::make_unique<SampleBatch>(size);
    signal_js();
  }
}

void Reader::hand_to(BatchConsumer& consumer, const SampleBatch& batch) {
  counting_[consumer.consume(batch) ? kReceived : kCloseDiscards] += batch.count;
}

void Reader::feed(std::shared_ptr<BatchConsumer> consumer) {
  std::lock_guard<std::mutex> lock(mutex_);
  consumer_ = std::move(consumer);
}

// Reads the kernel's drop counter, at most every kDropCheckInterval unless `now_anyway`.
void Reader::check_socket_drops(bool now_anyway) {
  const Clock::time_point now = Clock::now();
  if (!now_anyway && now < next_drop_check_) return;
  next_drop_check_ = now + kDropCheckInterval;
  drops_unchecked_ = false;
  const int64_t drops = socket_drops(socket_.fd);
  uint32_t dropped = 0;
  if (drops >= 0) {
    // SK_MEMINFO_DROPS is a wrapping 32-bit counter.
    dropped = static_cast<uint32_t>(drops) - last_socket_drops_;
    counting_[kKernelDrops] += dropped;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (drops >= 0) last_socket_drops_ = static_cast<uint32_t>(drops);
    published_ = counting_;
  }
  if (dropped != 0) verify_membership();
}

// Tells JavaScript when a count it reports as an event changed.
void Reader::announce() {
  bool changed = false;
  for (const Stat stat : {kKernelDrops, kQueueDrops, kFamilyGaps, kRejoins}) {
    changed = changed || counting_[stat] != announced_[stat];
    announced_[stat] = counting_[stat];
  }
  if (changed && !closing_) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      published_ = counting_;
    }
    signal_js();
  }
}

void Reader::fail(int errnum) {
  // A persistent socket error would make poll() report readiness forever: stop reading instead.
  failure_errno_.store(errnum);
  signal_js();
}

void Reader::signal_js() {
  if (!js_notified_.exchange(true)) notify_();
}

std::deque<std::unique_ptr<SampleBatch>> Reader::take(Stats& stats) {
  js_notified_.store(false);
  std::deque<std::unique_ptr<SampleBatch>> taken;
  std::lock_guard<std::mutex> lock(mutex_);
  taken.swap(queue_);
  uint64_t count = 0;
  size_t bytes = 0;
  for (const auto& batch : taken) {
    count += batch->count;
    bytes += batch->size();
  }
  queued_.fetch_sub(count);
  queued_bytes_.fetch_sub(bytes);
  stats = snapshot(false);
  return taken;
}

Stats Reader::stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  return snapshot(true);
}

// With mutex_ held. `fresh`: also the kernel's drops the reader thread has not read yet (a
// system call: stats() asks for it, the delivery path does not).
Stats Reader::snapshot(bool fresh) const {
  Stats s = published_;
  if (fresh) s[kKernelDrops] += unread_socket_drops();
  s[kQueued] = queued_.load();
  s[kFailureErrno] = static_cast<uint64_t>(failure_errno_.load());
  return s;
}

// Drops since the reader thread last looked, so a caller waiting for the count sees it at once.
// Called with mutex_ held (it guards socket_.fd and last_socket_drops_).
uint64_t Reader::unread_socket_drops() const {
  const int64_t now = socket_.fd >= 0 ? socket_drops(socket_.fd) : -1;
  return now >= 0 ? static_cast<uint32_t>(static_cast<uint32_t>(now) - last_socket_drops_) : 0;
}

Subscription Reader::subscription() {
  std::lock_guard<std::mutex> lock(mutex_);
  return Subscription{socket_, last_gap_ms_};
}

}  // namespace ovnpsample
