#include "metrics/labeled_histograms.h"

namespace metrics {

void RouteCodeHistograms::Observe(absl::string_view route, int code,
                                  absl::Duration d) {
  Histogram* h;
  {
    absl::MutexLock lock(&mu_);
    std::unique_ptr<Histogram>& slot = series_[{route, code}];
    if (slot == nullptr) slot = std::make_unique<Histogram>();
    h = slot.get();  // never removed: valid after the lock
  }
  h->Observe(d);
}

std::vector<RouteCodeHistograms::Series> RouteCodeHistograms::Read() const {
  std::vector<Series> out;
  absl::MutexLock lock(&mu_);
  out.reserve(series_.size());
  for (const auto& [key, h] : series_) {
    out.push_back({std::string(key.first), key.second, h->Read()});
  }
  return out;
}

}  // namespace metrics
