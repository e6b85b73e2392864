// Histograms keyed by a route and a status code, created on first use
// (vin_http_request_duration_seconds{route,code}). The caller keeps the
// label set bounded: routes are a fixed list, codes HTTP's.
#ifndef VIN_METRICS_LABELED_HISTOGRAMS_H_
#define VIN_METRICS_LABELED_HISTOGRAMS_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "metrics/metrics.h"

namespace metrics {

class RouteCodeHistograms {
 public:
  // Any thread. `route` must outlive this object (a literal of a fixed
  // list): it is kept as a view, so an observation allocates nothing.
  void Observe(absl::string_view route, int code, absl::Duration d);

  struct Series {
    std::string route;
    int code = 0;
    Histogram::Snapshot snapshot;
  };
  // Every series, by route then code.
  std::vector<Series> Read() const;

 private:
  mutable absl::Mutex mu_;
  std::map<std::pair<absl::string_view, int>, std::unique_ptr<Histogram>>
      series_ ABSL_GUARDED_BY(mu_);
};

}  // namespace metrics

#endif  // VIN_METRICS_LABELED_HISTOGRAMS_H_
