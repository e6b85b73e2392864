// The retry budget (DESIGN rule 11): the retries of the last 10 s (the
// window) may add at most `ratio` of the first attempts of it, plus a floor
// of `min_per_second` retries per second of the window (so that a quiet
// server still retries a blip). A retry the budget refuses is not made:
// while NHTSA is down, the service's load stays within (1 + ratio) times what
// its callers asked for, plus the floor, instead of multiplying by the
// attempts.
//
// The window is kept in a ring of kSlots slots (100 ms each) so that memory
// is fixed and a check is cheap at any request rate: a slot counts while it
// is one of the last kSlots, so the window is 10 s to within 100 ms. The
// fleet's budget in Redis (fleet::RedisBudget) keeps the same ring, so that
// both are one specification (tests/fleet/budget_conformance_test.cc).
//
// Pure and not thread-safe: time is passed in (the engine's monotonic clock).
#ifndef VIN_UPSTREAM_RETRY_BUDGET_H_
#define VIN_UPSTREAM_RETRY_BUDGET_H_

#include <array>
#include <cstdint>

#include "absl/time/time.h"

namespace upstream {

class RetryBudget {
 public:
  // The window: kSlots slots of kSlot each.
  static constexpr int kSlots = 100;
  static constexpr absl::Duration kSlot = absl::Milliseconds(100);

  // `ratio` < 0 turns the budget off (every retry allowed).
  RetryBudget(double ratio, double min_per_second);

  // `n` first attempts were sent at `now`.
  void RecordFirstAttempts(absl::Time now, int64_t n);
  // Takes one retry from the budget if it allows one at `now`.
  bool TryRetry(absl::Time now);

  // Retries allowed over the window ending at `now`, and made in it.
  double Allowance(absl::Time now);
  int64_t RetriesInWindow(absl::Time now);

 private:
  struct Slot {
    int64_t index = -1;  // which slot-sized period of time this holds
    int64_t firsts = 0;
    int64_t retries = 0;
  };
  Slot& SlotAt(absl::Time now);
  template <typename Fn>
  int64_t Sum(absl::Time now, Fn field);

  const double ratio_;
  const double floor_;  // retries allowed per window whatever the traffic
  std::array<Slot, kSlots> slots_;
};

}  // namespace upstream

#endif  // VIN_UPSTREAM_RETRY_BUDGET_H_
