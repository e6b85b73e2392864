#include "upstream/pushback.h"

#include <algorithm>

namespace upstream {

constexpr double kMinPerMinute = 1;

Pushback::Pushback(double per_minute)
    : configured_(per_minute), rate_(per_minute) {}

bool Pushback::OnPushback(absl::Time now, absl::Duration pause) {
  paused_until_ = std::max(paused_until_, now + pause);
  // The climb back starts when the pause ends, not during it.
  last_raise_ = paused_until_;
  if (configured_ <= 0) return false;
  const double halved = std::max(kMinPerMinute, rate_ / 2);
  const bool changed = halved != rate_;
  rate_ = halved;
  return changed;
}

bool Pushback::OnRecovered(absl::Time now) {
  last_raise_ = std::max(last_raise_, now);
  if (configured_ <= 0) return false;
  const double resumed =
      std::min(rate_, std::max(kMinPerMinute, configured_ * kRecoveryShare));
  const bool changed = resumed != rate_;
  rate_ = resumed;
  return changed;
}

bool Pushback::OnSuccess(absl::Time now) {
  if (configured_ <= 0 || rate_ >= configured_) return false;
  const double minutes =
      std::max(0.0, absl::ToDoubleMinutes(now - last_raise_));
  last_raise_ = std::max(last_raise_, now);
  const double raised = std::min(configured_, rate_ + configured_ * minutes);
  const bool changed = raised != rate_;
  rate_ = raised;
  return changed;
}

}  // namespace upstream
