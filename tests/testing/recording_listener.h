// A DecodeListener that records every event, for tests.
#ifndef VIN_TESTS_TESTING_RECORDING_LISTENER_H_
#define VIN_TESTS_TESTING_RECORDING_LISTENER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/types/optional.h"
#include "engine_api/types.h"
#include "retry/clock.h"

namespace testing_util {

class RecordingListener : public engine::DecodeListener {
 public:
  // Events are stamped with `clock` (not owned; null: absl::Now()), e.g.
  // the fake clock of an engine on one.
  explicit RecordingListener(const retry::Clock* clock = nullptr)
      : clock_(clock) {}

  struct Event {
    std::string kind;  // "queued", "retrying", "done", "failed"
    bool coalesced = false;
    engine::Queued queued;
    engine::Retrying retrying;
    std::shared_ptr<const engine::DecodeResult> result;
    engine::Failure failure;
    absl::Time at;  // when it came, on the listener's clock
  };

  void OnQueued(const engine::Queued& queued) override {
    Event e;
    e.kind = "queued";
    e.coalesced = queued.coalesced;
    e.queued = queued;
    Add(std::move(e));
  }
  void OnRetrying(const engine::Retrying& r) override {
    Event e;
    e.kind = "retrying";
    e.retrying = r;
    Add(std::move(e));
  }
  void OnDone(std::shared_ptr<const engine::DecodeResult> result) override {
    Event e;
    e.kind = "done";
    e.result = std::move(result);
    Add(std::move(e));
  }
  void OnFailed(const engine::Failure& f) override {
    Event e;
    e.kind = "failed";
    e.failure = f;
    Add(std::move(e));
  }

  // Waits for the terminal event; returns it, or nullopt after `timeout`.
  absl::optional<Event> WaitTerminal(absl::Duration timeout = absl::Seconds(20)) {
    absl::MutexLock lock(&mu_);
    auto terminal = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !events_.empty() &&
             (events_.back().kind == "done" || events_.back().kind == "failed");
    };
    mu_.AwaitWithTimeout(absl::Condition(&terminal), timeout);
    if (!terminal()) return absl::nullopt;
    return events_.back();
  }

  std::vector<Event> events() const {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  std::vector<std::string> kinds() const {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> out;
    for (const Event& e : events_) out.push_back(e.kind);
    return out;
  }

 private:
  void Add(Event e) {
    e.at = clock_ != nullptr ? clock_->Now() : absl::Now();
    absl::MutexLock lock(&mu_);
    events_.push_back(std::move(e));
  }

  const retry::Clock* const clock_;
  mutable absl::Mutex mu_;
  std::vector<Event> events_ ABSL_GUARDED_BY(mu_);
};

}  // namespace testing_util

#endif  // VIN_TESTS_TESTING_RECORDING_LISTENER_H_
