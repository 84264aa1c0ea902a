// How long the reader thread lets samples gather before it hands them to JavaScript.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace ovnpsample {

using Clock = std::chrono::steady_clock;

// While samples flow, the reader thread reads the socket once per interval rather than once per
// sample, and hands JavaScript what the interval brought in one batch: one wake-up of each
// thread per interval, whatever the rate. A hand-off costs both threads a fixed amount (wake-ups,
// the thread-safe call, one write of the output), which dominates when a batch holds a few
// messages; so the interval is as long as it takes to gather about kBatchMessages at the rate
// samples come, between these bounds: 1 ms, the added latency at 8,000/s and above; 10 ms, the
// most a sample waits at low rates. The rate follows a rise at once and a fall over about
// kRateSmoothing intervals: a thin interval (a sender's hiccup, a late wake-up) must not stretch
// the next ones at a rate that needs 1 ms.
inline constexpr auto kMinDeliveryInterval = std::chrono::microseconds(1000);
inline constexpr auto kMaxDeliveryInterval = std::chrono::microseconds(10000);
inline constexpr double kBatchMessages = 8;
inline constexpr double kRateSmoothing = 8;

// A consumer that writes each batch out (the CLI) rather than reacting to each sample can ask for a
// fixed interval instead: a longer one costs it latency it does not need and saves it the fixed
// cost of most hand-offs.
inline constexpr auto kMaxFixedDeliveryInterval = std::chrono::seconds(1);

// The delivery interval, from the rate the reads see, or fixed.
class DeliveryPace {
 public:
  // A zero `fixed` interval: adaptive.
  explicit DeliveryPace(Clock::duration fixed = Clock::duration::zero())
      : fixed_(fixed > Clock::duration::zero()), interval_(fixed_ ? fixed : kMinDeliveryInterval) {}

  Clock::duration interval() const { return interval_; }

  // `messages` came in `elapsed`, since the previous read.
  void observe(uint64_t messages, Clock::duration elapsed) {
    if (fixed_) return;
    const double seconds = std::chrono::duration<double>(elapsed).count();
    if (messages == 0 || seconds <= 0) return;  // only foreign or control datagrams: no news of the rate
    const double rate = static_cast<double>(messages) / seconds;
    // A rise shortens the interval at once; a fall lengthens it only if it lasts.
    rate_ = rate >= rate_ ? rate : rate_ + (rate - rate_) / kRateSmoothing;
    const auto wanted =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kBatchMessages / rate_));
    interval_ = std::clamp<Clock::duration>(wanted, kMinDeliveryInterval, kMaxDeliveryInterval);
  }

 private:
  bool fixed_;
  double rate_ = 0;  // messages per second, smoothed
  Clock::duration interval_;
};

}  // namespace ovnpsample
