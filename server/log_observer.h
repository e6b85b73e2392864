// The engine's events as log lines: one per finished decode (VIN, attempts,
// outcome, latency, waiters and the first few callers), one per scheduled
// retry, one per pushback and change of the effective upstream rate, and at
// most one a second for retries the budget refuses.
#ifndef VIN_SERVER_LOG_OBSERVER_H_
#define VIN_SERVER_LOG_OBSERVER_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "engine_api/types.h"

namespace server {

// Called on the engine's loop thread only; log::Event never blocks it.
class LogObserver final : public engine::EngineObserver {
 public:
  void OnRetryScheduled(const std::string& vin,
                        const engine::Retrying& r) override;
  void OnFlightFinished(const engine::FlightSummary& s) override;
  void OnPushback(const vpic::UpstreamError& error,
                  absl::Duration pause) override;
  void OnUpstreamRateChanged(double per_minute, double configured) override;
  void OnRetryRefused(const std::string& vin, absl::Duration delay) override;
  void OnBreakerChanged(const engine::BreakerChange& change) override;

 private:
  int64_t refused_ = 0;
  absl::Time last_refusal_log_ = absl::InfinitePast();
};

}  // namespace server

#endif  // VIN_SERVER_LOG_OBSERVER_H_
