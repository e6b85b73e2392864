#include "upstream/retry_budget.h"

#include <algorithm>

namespace upstream {

RetryBudget::RetryBudget(double ratio, double min_per_second)
    : ratio_(ratio),
      floor_(std::max(0.0, min_per_second) *
             absl::ToDoubleSeconds(kSlot * kSlots)) {}

RetryBudget::Slot& RetryBudget::SlotAt(absl::Time now) {
  const int64_t index = (now - absl::UnixEpoch()) / kSlot;
  Slot& s = slots_[static_cast<size_t>(((index % kSlots) + kSlots) % kSlots)];
  if (s.index != index) s = Slot{index, 0, 0};
  return s;
}

template <typename Fn>
int64_t RetryBudget::Sum(absl::Time now, Fn field) {
  const int64_t newest = (now - absl::UnixEpoch()) / kSlot;
  int64_t sum = 0;
  for (const Slot& s : slots_) {
    if (s.index > newest - kSlots && s.index <= newest) sum += field(s);
  }
  return sum;
}

void RetryBudget::RecordFirstAttempts(absl::Time now, int64_t n) {
  SlotAt(now).firsts += n;
}

double RetryBudget::Allowance(absl::Time now) {
  const int64_t firsts = Sum(now, [](const Slot& s) { return s.firsts; });
  return ratio_ * static_cast<double>(firsts) + floor_;
}

int64_t RetryBudget::RetriesInWindow(absl::Time now) {
  return Sum(now, [](const Slot& s) { return s.retries; });
}

bool RetryBudget::TryRetry(absl::Time now) {
  if (ratio_ < 0) return true;
  if (static_cast<double>(RetriesInWindow(now)) + 1 > Allowance(now) + 1e-9) {
    return false;
  }
  ++SlotAt(now).retries;
  return true;
}

}  // namespace upstream
