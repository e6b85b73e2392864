// testing_util::Eventually: the one way a test polls.
//
// It polls observable state that nothing signals (a counter another thread
// moves, a metric another process exports, a connection's outcome) until
// `holds()` is true, for at most `timeout`, checking every `interval`. It
// is not a sleep standing in for synchronisation: where the code under test
// offers a signal (a Notification, Engine::WaitForStats, Subprocess's
// WaitForLine, FakeVpic::WaitForRequests), a test waits on that instead.
// The bound makes a state that never comes a failure, not a hang; the
// interval keeps the poll from taking a core from the code it watches.
//
// Whether `holds()` became true; a test asserts on it (and on the state
// itself, for a useful message):
//   ASSERT_TRUE(testing_util::Eventually([&] { return cache.stats().queued ==
//   0; }));
#ifndef VIN_TESTS_TESTING_EVENTUALLY_H_
#define VIN_TESTS_TESTING_EVENTUALLY_H_

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace testing_util {

inline constexpr absl::Duration kEventuallyTimeout = absl::Seconds(30);
inline constexpr absl::Duration kEventuallyInterval = absl::Milliseconds(5);

template <typename Pred>
bool Eventually(Pred&& holds, absl::Duration timeout = kEventuallyTimeout,
                absl::Duration interval = kEventuallyInterval) {
  const absl::Time give_up = absl::Now() + timeout;
  while (!holds()) {
    if (absl::Now() >= give_up) return false;
    absl::SleepFor(interval);
  }
  return true;
}

}  // namespace testing_util

#endif  // VIN_TESTS_TESTING_EVENTUALLY_H_
