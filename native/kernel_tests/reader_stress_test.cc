// The reader thread's own stress test, built with ThreadSanitizer (npm run test:tsan): open,
// flood, close, and the teardown a worker.terminate() causes, with the threads the addon meets in
// Node played by plain threads, all of them instrumented:
// - the thread-safe function: notify() queues a wake-up; a "JavaScript" thread waits for it and
//   calls take() and stats(), as PsampleSocket's onReadable does;
// - close(): stop() from that JavaScript thread, at any moment of a flood, then count_undelivered;
// - worker.terminate(): the TSFN finalizer calls stop() from the worker's thread while the reader
//   may be notifying; after it returns, no notify() may come (the TSFN is gone by then);
// - several readers on one group, each with its own threads, opened and closed concurrently;
// - a reader feeding watch --aggregate's flow table (Reader::feed): drains from the "JavaScript"
//   thread racing the reader's adds, the table closed while the reader adds, the reader stopped.
// Node itself cannot run under TSan (its runtime preloaded into node crashes at start), so the
// N-API half of the hand-off is not here: it is Node's (napi_threadsafe_function) and is
// exercised under ASan by npm run test:asan.
// Needs root for a private network namespace (exits 77 otherwise). Usage: reader_stress_test
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../tests/netlink_builder.h"
#include "aggregate/shared_flow_table.h"
#include "private_netns.h"
#include "socket/injector.h"
#include "socket/reader.h"

namespace {

using namespace ovnpsample;
using namespace std::chrono_literals;

constexpr uint32_t kGroup = 3;
constexpr uint16_t kFamily = testing::kPsampleFamily;
std::atomic<int> failures{0};

void fail(const std::string& what) {
  failures++;
  std::fprintf(stderr, "FAIL %s\n", what.c_str());
}

std::vector<uint8_t> sample(uint32_t seq) {
  testing::NetlinkBuilder b;
  b.begin_message(kFamily).genl(kCmdSample).attr_host<uint32_t>(kAttrSampleGroup, 1);
  b.attr_host<uint32_t>(kAttrGroupSeq, seq).attr(kAttrData, std::vector<uint8_t>(100, 0xab).data(), 100).end_message();
  return b.bytes();
}

// Multicasts samples from a thread of its own until told to stop; counts what it sent.
class Flood {
 public:
  Flood() : thread_([this] { run(); }) {}
  ~Flood() { stop(); }
  uint64_t stop() {
    stopping_ = true;
    if (thread_.joinable()) thread_.join();
    return sent_;
  }

 private:
  void run() {
    SetupError error;
    auto injector = Injector::open(SourceProtocol::kUsersock, kGroup, "", error);
    if (!injector) return fail("injector: " + error.message);
    for (uint32_t seq = 0; !stopping_; seq++) {
      const auto m = sample(seq);
      if (injector->send(m.data(), m.size()) == 0) sent_++;
      if (seq % 256 == 0) std::this_thread::yield();
    }
  }
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> sent_{0};
  std::thread thread_;
};

// One PsampleSocket: the reader, the thread-safe function's queue and the JavaScript thread.
class Socket {
 public:
  explicit Socket(size_t queue_capacity = 4096, bool stalled = false) : stalled_(stalled) {
    SocketOptions options;
    options.protocol = SourceProtocol::kUsersock;
    options.family_id = kFamily;
    options.group_id = kGroup;
    options.receive_buffer_bytes = 1 << 20;
    SetupError error;
    reader_ = Reader::start(
        options, queue_capacity, [this] { notify(); }, error);
    if (!reader_) {
      fail("Reader::start: " + error.message);
      return;
    }
    js_ = std::thread([this] { javascript(); });
  }

  ~Socket() { close(); }

  // PsampleSocket.close(): the JavaScript thread stops the reader itself (the addon's Close()),
  // possibly right after a take().
  void close() {
    if (!reader_) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closing_ = true;
    }
    wake_.notify_all();
    if (js_.joinable()) js_.join();
    reader_.reset();
  }

  // worker.terminate(): the TSFN finalizer stops the reader from the worker's thread, which may be
  // in the middle of a take(); the JavaScript thread ends afterwards.
  void terminate_from(std::thread& other) {
    other = std::thread([this] { stop_reader(); });
  }

  uint64_t taken() const { return taken_; }
  Stats final_stats() { return reader_ ? reader_->stats() : Stats{}; }
  std::shared_ptr<Reader> reader() { return reader_; }

 private:
  void stop_reader() {
    reader_->stop();
    tsfn_gone_ = true;  // napi_release_threadsafe_function(abort) / the finalizer has run
  }

  void notify() {  // on the reader thread
    if (tsfn_gone_) fail("notify() after stop() returned: the thread-safe function is gone by then");
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_ = true;
    }
    wake_.notify_one();
  }

  void javascript() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait_for(lock, 5ms, [this] { return (pending_ && !stalled_) || closing_; });
      if (closing_) {
        lock.unlock();
        stop_reader();
        reader_->count_undelivered(0);
        return;
      }
      if (!pending_) continue;
      pending_ = false;
      lock.unlock();
      Stats stats{};
      for (const auto& batch : reader_->take(stats)) taken_ += batch->count;
      (void)reader_->stats();
      (void)reader_->subscription();
      lock.lock();
    }
  }

  const bool stalled_;
  std::shared_ptr<Reader> reader_;
  std::thread js_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool pending_ = false;
  bool closing_ = false;
  std::atomic<bool> tsfn_gone_{false};
  std::atomic<uint64_t> taken_{0};
};

// Every message the flood sent is taken or counted, once the flood has stopped before close().
void expect_accounted(const char* what, uint64_t sent, uint64_t taken, const Stats& s) {
  const uint64_t counted = taken + s[kQueueDrops] + s[kCloseDiscards] + s[kKernelDrops];
  if (counted != sent)
    fail(std::string(what) + ": sent " + std::to_string(sent) + ", taken " + std::to_string(taken) + " + queue drops " +
         std::to_string(s[kQueueDrops]) + " + close discards " + std::to_string(s[kCloseDiscards]) +
         " + kernel drops " + std::to_string(s[kKernelDrops]) + " = " + std::to_string(counted));
}

void close_during_flood(int rounds) {
  std::mt19937 random(7);
  for (int i = 0; i < rounds; i++) {
    Socket socket;
    Flood flood;
    std::this_thread::sleep_for(std::chrono::milliseconds(random() % 20));
    socket.close();
    flood.stop();
  }
}

void stalled_consumer_accounting() {
  Socket socket(/*queue_capacity=*/512, /*stalled=*/true);
  Flood flood;
  std::this_thread::sleep_for(300ms);
  const uint64_t sent = flood.stop();
  std::this_thread::sleep_for(100ms);  // the last multicasts are queued on the socket by now
  auto reader = socket.reader();
  socket.close();
  expect_accounted("stalled consumer", sent, socket.taken(), reader->stats());
  if (reader->stats()[kQueueDrops] == 0) fail("stalled consumer: the queue never filled");
}

void busy_consumer_accounting() {
  Socket socket(/*queue_capacity=*/1 << 16);
  Flood flood;
  std::this_thread::sleep_for(300ms);
  const uint64_t sent = flood.stop();
  std::this_thread::sleep_for(100ms);
  auto reader = socket.reader();
  socket.close();
  expect_accounted("busy consumer", sent, socket.taken(), reader->stats());
  if (socket.taken() == 0) fail("busy consumer: nothing was delivered");
}

void terminate_during_flood(int rounds) {
  std::mt19937 random(11);
  for (int i = 0; i < rounds; i++) {
    Flood flood;
    std::vector<std::unique_ptr<Socket>> sockets;
    for (int s = 0; s < 3; s++) sockets.push_back(std::make_unique<Socket>());
    std::this_thread::sleep_for(std::chrono::milliseconds(random() % 10));
    std::vector<std::thread> workers(sockets.size());
    for (size_t s = 0; s < sockets.size(); s++) sockets[s]->terminate_from(workers[s]);
    for (std::thread& worker : workers) worker.join();
    sockets.clear();  // ~ReaderWrap after the finalizer: stop() again, then the JavaScript thread ends
    flood.stop();
  }
}

// A reader feeding a flow table, drained every millisecond by a thread of its own (the
// JavaScript timer) while the flood goes on: every sample sent is in a drained flow or counted.
void fed_table_accounting() {
  FlowTableOptions table_options;
  table_options.group_window_ms = 5;
  auto table = std::make_shared<SharedFlowTable>(table_options);
  SocketOptions options;
  options.protocol = SourceProtocol::kUsersock;
  options.family_id = kFamily;
  options.group_id = kGroup;
  options.receive_buffer_bytes = 1 << 20;
  SetupError error;
  std::atomic<bool> notified_after_stop{false};
  std::atomic<bool> stopped{false};
  auto reader = Reader::start(
      options, 4096,
      [&] {
        if (stopped) notified_after_stop = true;
      },
      error, 2ms);
  if (!reader) return fail("fed table: Reader::start: " + error.message);
  reader->feed(table);
  std::atomic<bool> closing{false};
  double drained_samples = 0;
  double stats[flow_table::kStatSlots] = {};
  std::thread timer([&] {
    while (!closing) {
      table->drain(false, false, stats, [&](const NativeFlow& flow) { drained_samples += flow.samples; });
      (void)reader->stats();
      std::this_thread::sleep_for(1ms);
    }
  });
  Flood flood;
  std::this_thread::sleep_for(300ms);
  const uint64_t sent = flood.stop();
  std::this_thread::sleep_for(100ms);
  closing = true;
  timer.join();
  reader->stop();
  stopped = true;
  table->drain(true, true, stats, [&](const NativeFlow& flow) { drained_samples += flow.samples; });
  const Stats s = reader->stats();
  const uint64_t counted = s[kReceived] + s[kQueueDrops] + s[kCloseDiscards] + s[kKernelDrops];
  if (counted != sent || s[kQueued] != 0)
    fail("fed table: sent " + std::to_string(sent) + ", received " + std::to_string(s[kReceived]) +
         " + drops and discards = " + std::to_string(counted) + ", queued " + std::to_string(s[kQueued]));
  if (drained_samples != static_cast<double>(s[kReceived]))
    fail("fed table: the table took " + std::to_string(s[kReceived]) + " samples, its flows hold " +
         std::to_string(drained_samples));
  if (s[kReceived] == 0) fail("fed table: nothing was fed");
  if (notified_after_stop) fail("fed table: notify() after stop()");
}

// The table closed (watch's close) while the reader still adds: what it reads afterwards is
// counted as discarded at close, nothing is added to a freed table.
void fed_table_closed_during_flood(int rounds) {
  std::mt19937 random(13);
  for (int i = 0; i < rounds; i++) {
    auto table = std::make_shared<SharedFlowTable>(FlowTableOptions{});
    SocketOptions options;
    options.protocol = SourceProtocol::kUsersock;
    options.family_id = kFamily;
    options.group_id = kGroup;
    options.receive_buffer_bytes = 1 << 20;
    SetupError error;
    auto reader = Reader::start(
        options, 4096, [] {}, error, 1ms);
    if (!reader) return fail("fed table closed: Reader::start: " + error.message);
    reader->feed(table);
    Flood flood;
    std::this_thread::sleep_for(std::chrono::milliseconds(random() % 20));
    table->close();
    std::this_thread::sleep_for(std::chrono::milliseconds(random() % 5));
    const uint64_t sent = flood.stop();
    std::this_thread::sleep_for(20ms);
    reader->stop();
    const Stats s = reader->stats();
    const uint64_t counted = s[kReceived] + s[kQueueDrops] + s[kCloseDiscards] + s[kKernelDrops];
    if (counted != sent)
      fail("fed table closed: sent " + std::to_string(sent) + ", counted " + std::to_string(counted));
    double stats[flow_table::kStatSlots] = {};
    if (table->drain(true, true, stats, [](const NativeFlow&) {})) fail("fed table closed: a closed table drained");
  }
}

}  // namespace

int main() {
  if (const int status = ovnpsample::testing::enter_private_netns("reader_stress_test")) return status;
  const auto start = std::chrono::steady_clock::now();
  close_during_flood(40);
  stalled_consumer_accounting();
  busy_consumer_accounting();
  terminate_during_flood(20);
  fed_table_accounting();
  fed_table_closed_during_flood(20);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (failures > 0) return 1;
  std::printf(
      "reader stress: close during a flood x40, stalled and busy consumers accounted exactly, "
      "terminate from another thread x20 (3 readers each), a fed flow table drained during a flood and accounted "
      "exactly, closed during a flood x20, in %.1f s\n",
      seconds);
  return 0;
}
