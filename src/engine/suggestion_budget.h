// Rule 21: how many invalid VINs per second get suggestions. Each costs up
// to a millisecond of snapshot decodes (bench/suggest_bench), so a caller
// sending invalid VINs by the thousand could otherwise buy that much CPU
// with requests that cost nothing else; past the budget a refusal comes
// without suggestions (the refusal is the same). Thread-safe.
#ifndef VIN_ENGINE_SUGGESTION_BUDGET_H_
#define VIN_ENGINE_SUGGESTION_BUDGET_H_

#include <algorithm>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace engine {

class SuggestionBudget {
 public:
  // `per_second` suggestions a second, in bursts of as many; 0: none.
  explicit SuggestionBudget(int per_second) : per_second_(per_second) {}

  // Whether one more invalid VIN may get suggestions at `now` (spent).
  bool Take(absl::Time now) {
    if (per_second_ <= 0) return false;
    absl::MutexLock lock(&mu_);
    if (last_ == absl::InfinitePast()) {
      tokens_ = per_second_;
    } else if (now > last_) {
      tokens_ = std::min<double>(
          per_second_,
          tokens_ + absl::ToDoubleSeconds(now - last_) * per_second_);
    }
    last_ = std::max(last_, now);
    if (tokens_ < 1) return false;
    tokens_ -= 1;
    return true;
  }

 private:
  const int per_second_;
  absl::Mutex mu_;
  double tokens_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time last_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace engine

#endif  // VIN_ENGINE_SUGGESTION_BUDGET_H_
