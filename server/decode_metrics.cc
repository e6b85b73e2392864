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

// metrics::Reason lists the reasons in FailureReason's order, with the
// labels of domain::TraitsOf (tests/domain/failure_test.cc holds the two
// to one another).
metrics::Reason ReasonOf(engine::FailureReason r) {
  static_assert(metrics::N<metrics::Reason>() == domain::kFailureReasons);
  return static_cast<metrics::Reason>(r);
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
