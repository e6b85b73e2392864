// The chaos soak's records (soak_test.cc): what the load saw and every
// violation of a promise (Ledger), and the calls under way (LiveCalls).
#ifndef VIN_TESTS_SOAK_LEDGER_H_
#define VIN_TESTS_SOAK_LEDGER_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <grpcpp/client_context.h>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace soak {

// Everything the load saw, and every violation of a promise.
class Ledger {
 public:
  void Violation(std::string what) {
    absl::MutexLock lock(&mu_);
    if (violations_.size() < 50) violations_.push_back(std::move(what));
    ++violation_count_;
  }
  // The caller of `vin` (a VIN no one else asks for) left at `when`.
  void Left(const std::string& vin, absl::Time when) {
    absl::MutexLock lock(&mu_);
    left_.emplace_back(vin, when);
  }
  void Count(const std::string& what, int64_t n = 1) {
    absl::MutexLock lock(&mu_);
    counts_[what] += n;
  }
  void NeverAsked(const std::string& vin) {
    absl::MutexLock lock(&mu_);
    invalid_.insert(vin);
  }

  std::vector<std::pair<std::string, absl::Time>> left() const {
    absl::MutexLock lock(&mu_);
    return left_;
  }
  std::set<std::string> invalid() const {
    absl::MutexLock lock(&mu_);
    return invalid_;
  }
  std::map<std::string, int64_t> counts() const {
    absl::MutexLock lock(&mu_);
    return counts_;
  }
  int64_t count(const std::string& what) const {
    absl::MutexLock lock(&mu_);
    auto it = counts_.find(what);
    return it == counts_.end() ? int64_t{0} : it->second;
  }
  int64_t violation_count() const {
    absl::MutexLock lock(&mu_);
    return violation_count_;
  }
  std::vector<std::string> violations() const {
    absl::MutexLock lock(&mu_);
    return violations_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::string> violations_ ABSL_GUARDED_BY(mu_);
  int64_t violation_count_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::pair<std::string, absl::Time>> left_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> invalid_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int64_t> counts_ ABSL_GUARDED_BY(mu_);
};

// The contexts of calls under way, so that a stuck one can be cancelled
// (and reported) instead of hanging the test.
class LiveCalls {
 public:
  void Add(grpc::ClientContext* c) {
    absl::MutexLock lock(&mu_);
    calls_.insert(c);
  }
  void Remove(grpc::ClientContext* c) {
    absl::MutexLock lock(&mu_);
    calls_.erase(c);
  }
  int CancelAll() {
    absl::MutexLock lock(&mu_);
    for (grpc::ClientContext* c : calls_) c->TryCancel();
    return static_cast<int>(calls_.size());
  }

 private:
  absl::Mutex mu_;
  std::set<grpc::ClientContext*> calls_ ABSL_GUARDED_BY(mu_);
};

}  // namespace soak

#endif  // VIN_TESTS_SOAK_LEDGER_H_
