#include "retry/jitter.h"

#include <algorithm>
#include <utility>

namespace retry {

absl::Duration DecorrelatedJitter(absl::Duration base, absl::Duration cap,
                                  absl::Duration prev, double u) {
  const absl::Duration span = std::max(base, prev) * 3 - base;
  return std::min(cap, base + span * u);
}

Jitter::Jitter(absl::Duration base, absl::Duration cap)
    : base_(base), cap_(cap) {}

Jitter::Jitter(absl::Duration base, absl::Duration cap, Uniform uniform)
    : base_(base), cap_(cap), uniform_(std::move(uniform)) {}

double Jitter::Draw() {
  if (uniform_) return uniform_();
  return absl::Uniform<double>(gen_, 0.0, 1.0);
}

absl::Duration Jitter::Next(absl::Duration prev) {
  return DecorrelatedJitter(base_, cap_, prev, Draw());
}

absl::Duration Jitter::Stagger() { return base_ * Draw(); }

}  // namespace retry
