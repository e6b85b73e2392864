#include "server/log_observer.h"

#include <vector>

#include "domain/failure.h"
#include "server/common/log.h"

namespace server {

using log::Field;

void LogObserver::OnRetryScheduled(const std::string& vin,
                                   const engine::Retrying& r) {
  log::Event(log::Level::kWarn, "retry",
             {{"vin", vin},
              {"attempt", r.attempt},
              {"next_delay", absl::FormatDuration(r.next_delay)},
              {"error", r.error.kind},
              {"http_status", r.error.http_status},
              {"message", r.error.message}});
}

void LogObserver::OnFlightFinished(const engine::FlightSummary& s) {
  std::vector<std::vector<Field>> callers;
  for (const engine::CallerInfo& c : s.callers) {
    std::vector<Field> caller = {{"peer", c.peer}};
    if (!c.request_id.empty()) caller.push_back({"request_id", c.request_id});
    callers.push_back(std::move(caller));
  }
  std::vector<Field> fields = {
      {"vin", s.vin},
      {"model_year", s.model_year},
      {"outcome", s.outcome},
      {"attempts", s.attempts},
      {"latency_ms", absl::ToDoubleMilliseconds(s.latency)},
      {"waiters", s.waiters},
      {"tenant", s.tenant},
      {"priority", s.priority}};
  if (!callers.empty()) fields.push_back(Field::Objects("callers", callers));
  if (s.waiters > s.callers.size()) {
    fields.push_back({"more_callers", s.waiters - s.callers.size()});
  }
  log::Event(s.ok ? log::Level::kInfo : log::Level::kWarn, "decode", fields);
}

void LogObserver::OnPushback(const vpic::UpstreamError& error,
                             absl::Duration pause) {
  log::Event(
      log::Level::kWarn, "pushback: pausing every upstream request",
      {{"answer", error.message}, {"pause", absl::FormatDuration(pause)}});
}

void LogObserver::OnUpstreamRateChanged(double per_minute, double configured) {
  log::Event(log::Level::kWarn, "upstream rate changed",
             {{"per_minute", per_minute}, {"configured", configured}});
}

void LogObserver::OnBreakerChanged(const engine::BreakerChange& c) {
  using upstream::BreakerState;
  using Cause = engine::BreakerChange::Cause;
  switch (c.to) {
    case BreakerState::kOpen: {
      const char* what =
          c.cause == Cause::kProbeElsewhere
              ? "another replica probes vPIC: circuit breaker open until its "
                "answer"
          : c.cause == Cause::kFleet
              ? "vPIC unreachable, says another replica: circuit breaker "
                "open, nothing is sent until the fleet's probe"
          : c.from == BreakerState::kClosed
              ? "vPIC unreachable: circuit breaker open, nothing is sent "
                "until its probe"
              : "vPIC still unreachable: the probe failed, breaker open again";
      log::Event(log::Level::kWarn, what,
                 {{"from", upstream::Name(c.from)},
                  {"since", domain::UtcSeconds(c.unreachable_since)},
                  {"next_probe_in", absl::FormatDuration(c.next_probe)},
                  {"last_error", c.last_error},
                  {"by", c.by}});
      return;
    }
    case BreakerState::kHalfOpen:
      log::Event(log::Level::kInfo,
                 "circuit breaker half open: one probe goes to vPIC",
                 {{"from", upstream::Name(c.from)}});
      return;
    case BreakerState::kClosed:
      log::Event(log::Level::kWarn,
                 c.cause == Cause::kFleet
                     ? "vPIC answers again, says another replica: circuit "
                       "breaker closed, the rate climbs back from a tenth"
                     : "vPIC answers again: circuit breaker closed, the rate "
                       "climbs back from a tenth",
                 {{"from", upstream::Name(c.from)}, {"by", c.by}});
      return;
  }
}

void LogObserver::OnRetryRefused(const std::string& vin,
                                 absl::Duration delay) {
  ++refused_;
  const absl::Time now = absl::Now();
  if (now - last_refusal_log_ < absl::Seconds(1)) return;
  log::Event(log::Level::kWarn,
             "retry budget spent: retries refused since the last such line",
             {{"refused", refused_},
              {"latest_vin", vin},
              {"suggested_delay", absl::FormatDuration(delay)}});
  refused_ = 0;
  last_refusal_log_ = now;
}

}  // namespace server
