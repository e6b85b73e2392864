#include "engine/engine.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace engine {

absl::StatusOr<std::unique_ptr<Engine>> Engine::Create(EngineOptions options) {
  if (options.retry_base <= absl::ZeroDuration() ||
      options.retry_cap < options.retry_base) {
    return absl::InvalidArgumentError(
        "retry base must be positive and no larger than the retry cap");
  }
  if (options.max_attempts < 1) {
    return absl::InvalidArgumentError("max attempts must be at least 1");
  }
  if (options.max_upstream_concurrency < 1) {
    return absl::InvalidArgumentError(
        "upstream concurrency must be at least 1");
  }
  auto client = vpic::Client::Create(
      {options.vpic_base_url, options.attempt_timeout, "vin-decode-service/1"});
  if (!client.ok()) return client.status();
  return std::unique_ptr<Engine>(
      new Engine(std::move(options), *std::move(client)));
}

Engine::Engine(EngineOptions options, std::unique_ptr<vpic::Client> client)
    : options_(std::move(options)),
      clock_(retry::Clock::Real()),
      client_(std::move(client)),
      scheduler_(clock_),
      jitter_(options_.retry_base, options_.retry_cap, options_.uniform),
      cache_(options_.cache_capacity, options_.cache_ttl),
      loop_([this] { Run(); }) {}

Engine::~Engine() {
  Shutdown();
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  client_->Wakeup();
  loop_.join();
}

// ---- Thread-safe entry points ----

absl::StatusOr<Engine::WaiterId> Engine::Submit(const DecodeRequest& request,
                                                DecodeListener* listener) {
  auto valid = vin::Validate(request.vin, request.check_digit_policy);
  if (!valid.ok()) return valid.status();
  if (request.model_year != 0 &&
      (request.model_year < 1980 || request.model_year > 2100)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model_year must be 0 (no hint) or between 1980 and 2100, got ",
        request.model_year));
  }
  const SourcePreference source = Resolve(request.source_preference);
  if (source == SourcePreference::kSnapshotOnly &&
      (options_.snapshots == nullptr ||
       options_.snapshots->Current() == nullptr)) {
    return absl::FailedPreconditionError(
        "no offline vPIC snapshot is loaded on this server; ask for "
        "SOURCE_PREFERENCE_LIVE_ONLY, or start it with --snapshot_path");
  }
  if (shutting_down_.load()) {
    return absl::UnavailableError("the server is shutting down");
  }
  if (admitted_.fetch_add(1) >= options_.max_waiters) {
    admitted_.fetch_sub(1);
    return absl::ResourceExhaustedError(absl::StrCat(
        "the server has ", options_.max_waiters,
        " decodes in progress; try again shortly"));
  }
  std::vector<vpic::Note> warnings;
  for (auto& w : valid->warnings) {
    warnings.push_back({std::move(w.code), std::move(w.message)});
  }
  const WaiterId id = next_waiter_.fetch_add(1);
  Waiter waiter{listener, request.deadline, 0, source};
  Post([this, id, key = coalesce::FlightKey{valid->vin, request.model_year},
        warnings = std::move(warnings), waiter, stagger = request.stagger] {
    OnSubmit(id, key, warnings, waiter, stagger);
  });
  return id;
}

SourcePreference Engine::Resolve(SourcePreference requested) const {
  if (requested != SourcePreference::kUnspecified) return requested;
  if (options_.default_source != SourcePreference::kUnspecified) {
    return options_.default_source;
  }
  const bool loaded = options_.snapshots != nullptr &&
                      options_.snapshots->Current() != nullptr;
  return loaded ? SourcePreference::kLiveThenSnapshot
                : SourcePreference::kLiveOnly;
}

void Engine::Cancel(WaiterId id) {
  Post([this, id] {
    OnCancel(id, FailureReason::kCancelled, "the caller cancelled");
  });
}

void Engine::Shutdown() {
  if (shutting_down_.exchange(true)) return;
  Post([this] {
    loop_shutting_down_ = true;
    Failure f;
    f.reason = FailureReason::kShuttingDown;
    f.message = "the server is shutting down; try again later";
    f.retryable = true;
    FailEverything(f);
  });
}

EngineStats Engine::Stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

bool Engine::WaitForStats(std::function<bool(const EngineStats&)> pred,
                          absl::Duration timeout) const {
  const absl::Time deadline = absl::Now() + timeout;
  absl::MutexLock lock(&mu_);
  while (!pred(stats_)) {
    if (stats_changed_.WaitWithDeadline(&mu_, deadline)) return pred(stats_);
  }
  return true;
}

void Engine::Post(std::function<void()> task) {
  {
    absl::MutexLock lock(&mu_);
    posted_.push_back(std::move(task));
  }
  client_->Wakeup();
}

// ---- The loop ----

void Engine::Run() {
  std::vector<std::function<void()>> tasks;
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      tasks.swap(posted_);
      if (stop_ && tasks.empty()) break;
    }
    for (auto& task : tasks) task();
    tasks.clear();
    scheduler_.RunDue();
    StartReadyAttempts();
    PublishStats();
    absl::Duration timeout = absl::Seconds(1);
    if (auto next = scheduler_.NextWakeup()) {
      timeout = std::min(timeout, *next - clock_->Now());
    }
    client_->Poll(std::max(timeout, absl::ZeroDuration()));
  }
}

void Engine::PublishStats() {
  absl::MutexLock lock(&mu_);
  stats_.flights = table_.flights();
  stats_.waiters = table_.waiters();
  stats_.pending_wakeups = scheduler_.pending();
  stats_.upstream_active = client_->active();
  stats_.upstream_requests = upstream_requests_;
  stats_.cache_size = cache_.size();
  stats_changed_.SignalAll();
}

}  // namespace engine
