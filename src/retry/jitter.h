// Decorrelated jitter for retry delays (DESIGN rule 3).
#ifndef VIN_RETRY_JITTER_H_
#define VIN_RETRY_JITTER_H_

#include <functional>

#include "absl/random/random.h"
#include "absl/time/time.h"

namespace retry {

// next = min(cap, base + u * (max(base, prev) * 3 - base)), u in [0, 1).
// `prev` is the delay actually waited before the attempt that just failed;
// before the first retry it is `base`, so the first retry already waits a
// random delay in [base, 3 * base).
absl::Duration DecorrelatedJitter(absl::Duration base, absl::Duration cap,
                                  absl::Duration prev, double u);

// Draws retry delays and first-attempt staggers. Not thread-safe: owned by
// the engine's loop thread.
class Jitter {
 public:
  // Returns a value in [0, 1). Injected by tests only.
  using Uniform = std::function<double()>;

  // Production: randomness from a non-deterministically seeded absl::BitGen.
  Jitter(absl::Duration base, absl::Duration cap);
  // Tests: randomness from `uniform` (an empty function means real
  // randomness, as above).
  Jitter(absl::Duration base, absl::Duration cap, Uniform uniform);

  // The delay before the next attempt, given the delay waited before the
  // attempt that failed (`base` for the first retry).
  absl::Duration Next(absl::Duration prev);
  // A random delay in [0, base) before the first attempt of a flight started
  // by a burst (DESIGN rule 7).
  absl::Duration Stagger();

  absl::Duration base() const { return base_; }
  absl::Duration cap() const { return cap_; }

 private:
  double Draw();

  absl::Duration base_;
  absl::Duration cap_;
  Uniform uniform_;  // empty in production
  absl::BitGen gen_;
};

}  // namespace retry

#endif  // VIN_RETRY_JITTER_H_
