// The open streaming calls of a service, so that a drain or a status change
// can reach every one of them. A call is reference-counted: gRPC holds one
// reference until OnDone, and a walk over the registry holds one for each
// call while it visits it, so that a call that ends meanwhile is deleted only
// once nobody uses it. Thread-safe.
#ifndef VIN_SERVER_CALL_REGISTRY_H_
#define VIN_SERVER_CALL_REGISTRY_H_

#include <atomic>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"

namespace server {

// A call that a registry can hold: created with one reference (gRPC's).
class RegisteredCall {
 public:
  void Ref() { refs_.fetch_add(1); }
  void Unref() {
    if (refs_.fetch_sub(1) == 1) delete this;
  }

 protected:
  virtual ~RegisteredCall() = default;

 private:
  std::atomic<int> refs_{1};
};

template <typename Call>
class CallRegistry {
 public:
  CallRegistry() = default;
  // The last calls left (OnDone, on gRPC's threads) before gRPC's shutdown
  // returned; taking the lock orders their writes before the set is freed.
  ~CallRegistry() { absl::MutexLock lock(&mu_); }
  void Add(Call* call) {
    absl::MutexLock lock(&mu_);
    calls_.insert(call);
  }
  void Remove(Call* call) {
    absl::MutexLock lock(&mu_);
    calls_.erase(call);
  }
  // Calls fn(call) for every registered call, without holding the
  // registry's lock while fn runs (fn may end the call).
  template <typename Fn>
  void ForEach(Fn fn) {
    std::vector<Call*> calls;
    {
      absl::MutexLock lock(&mu_);
      for (Call* c : calls_) {
        c->Ref();
        calls.push_back(c);
      }
    }
    for (Call* c : calls) {
      fn(c);
      c->Unref();
    }
  }

 private:
  absl::Mutex mu_;
  absl::flat_hash_set<Call*> calls_ ABSL_GUARDED_BY(mu_);
};

}  // namespace server

#endif  // VIN_SERVER_CALL_REGISTRY_H_
