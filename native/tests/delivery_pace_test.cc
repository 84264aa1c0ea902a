// The delivery interval: adaptive between its bounds by rate, or fixed when asked.
#include <chrono>
#include <cstdint>

#include "check.h"
#include "socket/delivery_pace.h"

namespace ovnpsample::testing {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

// In microseconds: what the check prints when it fails.
int64_t us(Clock::duration d) { return std::chrono::duration_cast<microseconds>(d).count(); }

TEST_CASE("pace: adaptive, 1 ms at high rates, about 8 messages per interval between, 10 ms at low rates") {
  DeliveryPace pace;
  CHECK_EQ(us(pace.interval()), us(kMinDeliveryInterval));
  pace.observe(100, milliseconds(1));  // 100,000/s
  CHECK_EQ(us(pace.interval()), us(kMinDeliveryInterval));
  DeliveryPace low;
  low.observe(1, milliseconds(100));  // 10/s
  CHECK_EQ(us(low.interval()), us(kMaxDeliveryInterval));
  DeliveryPace middle;
  middle.observe(8, milliseconds(4));  // 2,000/s: 8 messages take 4 ms
  CHECK_EQ(us(middle.interval()), 4000);
}

TEST_CASE("pace: a rise is followed at once, a fall only if it lasts") {
  DeliveryPace pace;
  pace.observe(1, milliseconds(100));
  CHECK_EQ(us(pace.interval()), us(kMaxDeliveryInterval));
  pace.observe(100, milliseconds(1));
  CHECK_EQ(us(pace.interval()), us(kMinDeliveryInterval));
  pace.observe(1, milliseconds(10));  // one thin interval
  CHECK(us(pace.interval()) < 2000);
}

TEST_CASE("pace: a fixed interval stays whatever the rate, and nothing reaching the socket changes it") {
  DeliveryPace pace(milliseconds(20));
  CHECK_EQ(us(pace.interval()), 20000);
  pace.observe(100000, milliseconds(1));
  pace.observe(1, milliseconds(500));
  pace.observe(0, milliseconds(20));
  CHECK_EQ(us(pace.interval()), 20000);
}

}  // namespace
}  // namespace ovnpsample::testing
