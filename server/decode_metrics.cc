#include "server/decode_metrics.h"

namespace server {
namespace {

using metrics::I;

metrics::Source SourceOf(engine::Source s) {
  switch (s) {
    case engine::Source::kVpic:
      return metrics::Source::kVpic;
    case engine::Source::kCache:
      return metrics::Source::kCache;
    case engine::Source::kSnapshot:
      return metrics::Source::kSnapshot;
  }
  return metrics::Source::kVpic;
}

metrics::Reason ReasonOf(engine::FailureReason r) {
  using R = engine::FailureReason;
  switch (r) {
    case R::kInvalidVin:
      return metrics::Reason::kInvalidVin;
    case R::kUpstreamUnavailable:
      return metrics::Reason::kUpstreamUnavailable;
    case R::kUpstreamRejected:
      return metrics::Reason::kUpstreamRejected;
    case R::kCancelled:
      return metrics::Reason::kCancelled;
    case R::kShuttingDown:
      return metrics::Reason::kShuttingDown;
    case R::kOverloaded:
      return metrics::Reason::kOverloaded;
    case R::kDeadlineExceeded:
      return metrics::Reason::kDeadlineExceeded;
    case R::kNoSnapshot:
      return metrics::Reason::kNoSnapshot;
    case R::kInvalidRequest:
      return metrics::Reason::kInvalidRequest;
  }
  return metrics::Reason::kUpstreamUnavailable;
}

}  // namespace

void CountDone(metrics::ServiceMetrics* m, const engine::DecodeResult& result,
               absl::Duration elapsed) {
  if (m == nullptr) return;
  const metrics::Source source = SourceOf(result.source);
  m->decodes[I(source)][I(metrics::Outcome::kDone)].Add();
  m->decode_duration[I(source)].Observe(elapsed);
}

void CountFailed(metrics::ServiceMetrics* m, engine::FailureReason reason,
                 absl::Duration elapsed) {
  if (m == nullptr) return;
  const metrics::Source source = reason == engine::FailureReason::kNoSnapshot
                                     ? metrics::Source::kSnapshot
                                     : metrics::Source::kVpic;
  m->decodes[I(source)][I(metrics::Outcome::kFailed)].Add();
  m->decode_failures[I(ReasonOf(reason))].Add();
  m->decode_duration[I(source)].Observe(elapsed);
}

}  // namespace server
