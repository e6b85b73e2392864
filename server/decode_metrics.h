// Counting what callers are answered (vin_decodes_total and friends), in
// one place for unary calls and batch items.
#ifndef VIN_SERVER_DECODE_METRICS_H_
#define VIN_SERVER_DECODE_METRICS_H_

#include "absl/time/time.h"
#include "engine_api/types.h"
#include "metrics/metrics.h"

namespace server {

// A caller got `result`, `elapsed` after it asked.
void CountDone(metrics::ServiceMetrics* m, const engine::DecodeResult& result,
               absl::Duration elapsed);
// A caller got a failure for `reason`. Failures count under the source that
// was asked: the snapshot for NO_SNAPSHOT, vPIC otherwise.
void CountFailed(metrics::ServiceMetrics* m, engine::FailureReason reason,
                 absl::Duration elapsed);

}  // namespace server

#endif  // VIN_SERVER_DECODE_METRICS_H_
