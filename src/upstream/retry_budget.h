// The retry budget (DESIGN rule 11): the retries of the last `window` (10 s)
// may add at most `ratio` of the first attempts of that window, plus a floor
// of `min_per_second` retries per second of the window (so that a quiet
// server still retries a blip). A retry the budget refuses is not made:
// while NHTSA is down, the service's load stays within (1 + ratio) times what
// its callers asked for, plus the floor, instead of multiplying by the
// attempts.
//
// The window is kept in slots (1/100 of it each) so that memory is fixed
// and a check is cheap at any request rate.
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
  // `ratio` < 0 turns the budget off (every retry allowed).
  RetryBudget(double ratio, double min_per_second,
              absl::Duration window = absl::Seconds(10));

  // `n` first attempts were sent at `now`.
  void RecordFirstAttempts(absl::Time now, int64_t n);
  // Takes one retry from the budget if it allows one at `now`.
  bool TryRetry(absl::Time now);

  // Retries allowed over the window ending at `now`, and made in it.
  double Allowance(absl::Time now);
  int64_t RetriesInWindow(absl::Time now);

 private:
  static constexpr int kSlots = 100;
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
  const absl::Duration slot_;
  std::array<Slot, kSlots> slots_;
};

}  // namespace upstream

#endif  // VIN_UPSTREAM_RETRY_BUDGET_H_
