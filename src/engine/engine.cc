#include "engine/engine.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "domain/limits.h"
#include "engine/invalid_reason.h"
#include "engine/options_mapping.h"
#include "engine/source_policy.h"
#include "engine/vpic_corrections.h"
#include "snapshot/snapshot.h"
#include "vpic/client.h"

namespace engine {

absl::StatusOr<std::unique_ptr<Engine>> Engine::Create(EngineOptions options) {
  auto client = vpic::Client::Create(ClientOptionsOf(options));
  if (!client.ok()) return client.status();
  return Create(std::move(options), *std::move(client), LoopMode::kOwnThread);
}

absl::StatusOr<std::unique_ptr<Engine>> Engine::Create(
    EngineOptions options, std::unique_ptr<vpic::UpstreamClient> transport,
    LoopMode mode) {
  if (absl::Status valid = CheckEngineOptions(options); !valid.ok()) {
    return valid;
  }
  auto loop = loop::EventLoop::Create(options.clock);
  if (!loop.ok()) return loop.status();
  return std::unique_ptr<Engine>(new Engine(
      std::move(options), *std::move(loop), std::move(transport), mode));
}

Engine::Engine(EngineOptions options, std::unique_ptr<loop::EventLoop> loop,
               std::unique_ptr<vpic::UpstreamClient> transport, LoopMode mode)
    : options_(std::move(options)),
      clock_(ClockOf(options_)),
      own_metrics_(options_.metrics != nullptr
                       ? nullptr
                       : std::make_unique<metrics::ServiceMetrics>()),
      metrics_(options_.metrics != nullptr ? options_.metrics
                                           : own_metrics_.get()),
      loop_(std::move(loop)),
      mode_(mode),
      scheduler_(loop_->scheduler()),
      jitter_(options_.retry_base, options_.retry_cap, options_.uniform),
      cache_(CacheOptionsOf(options_, clock_)),
      answerer_(AnswererDepsOf(options_, clock_, &cache_, metrics_, &scheduler_,
                               &admitted_)),
      budget_(MakeBudget()),
      attempts_(RunnerOptionsOf(options_), std::move(transport), budget_.get(),
                clock_, metrics_, options_.observer, this),
      fleet_(options_.fleet == nullptr
                 ? LocalFleet()
                 : SharedFleet(FleetOptionsOf(options_), this, &scheduler_)) {
  counts_.upstream_rate_per_minute = options_.budget.rate_per_minute;
  attempts_.transport().Attach(loop_.get());
  if (mode_ == LoopMode::kOwnThread) thread_ = std::thread([this] { Run(); });
}

std::unique_ptr<upstream::UpstreamBudget> Engine::MakeBudget() {
  if (options_.fleet == nullptr) {
    return std::make_unique<upstream::LocalBudget>(options_.budget,
                                                   clock_->Now());
  }
  options_.fleet->Attach(loop_.get());
  return options_.fleet->MakeBudget(options_.budget,
                                    [clock = clock_] { return clock->Now(); });
}

Engine::~Engine() {
  Shutdown();
  // After the shutdown's failures, on the loop: the fleet's pending calls
  // end there, and it posts nothing afterwards.
  if (options_.fleet != nullptr) Post([this] { options_.fleet->Detach(); });
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (mode_ == LoopMode::kOwnThread) {
    loop_->Wakeup();
    thread_.join();
  } else {
    RunOnce();  // runs the posted shutdown
  }
}

// ---- Thread-safe entry points ----

namespace {

// The key of `request` and the notes its validation left, or the failure
// that refuses it: a VIN that breaks a rule (INVALID_VIN, the message naming
// it), a model-year hint its position 10 cannot mean (INVALID_REQUEST). A
// reference request (rule 18) comes checked and normalised by its caller.
absl::optional<Failure> KeyOf(const DecodeRequest& request,
                              coalesce::FlightKey* key,
                              std::vector<vpic::Note>* warnings) {
  if (!request.reference.empty()) {
    key->reference = request.reference;
    return absl::nullopt;
  }
  auto valid =
      request.allow_partial
          ? vin::ValidatePartial(request.vin, request.check_digit_policy)
          : vin::Validate(request.vin, request.check_digit_policy);
  if (!valid.ok()) {
    std::string message(valid.status().message());
    if (!request.allow_partial && request.vin.find('*') != std::string::npos) {
      absl::StrAppend(&message,
                      " (a partial VIN, '*' for an unknown position, is "
                      "decoded when the request sets allow_partial)");
    }
    return domain::FailureOf(FailureReason::kInvalidVin, std::move(message),
                             InvalidReasonOf(valid.status()));
  }
  // Rule 19: a hint the VIN's position 10 cannot mean is refused here, so
  // that it is never a cache key nor an upstream request. (No hint, no
  // calendar: the hot path reads no clock for it.)
  if (request.model_year != 0) {
    if (absl::Status year = vin::CheckModelYearHint(
            valid->vin, request.model_year, domain::kMinModelYear,
            domain::LastModelYear(absl::Now()));
        !year.ok()) {
      return domain::FailureOf(FailureReason::kInvalidRequest,
                               std::string(year.message()),
                               InvalidReasonOf(year));
    }
  }
  key->vin = valid->vin;
  key->model_year = request.model_year;
  for (auto& w : valid->warnings) {
    warnings->push_back({std::move(w.code), std::move(w.message)});
  }
  return absl::nullopt;
}

}  // namespace

Admission Engine::Submit(const DecodeRequest& request,
                         DecodeListener* listener) {
  coalesce::FlightKey key;
  std::vector<vpic::Note> warnings;
  if (absl::optional<Failure> refused = KeyOf(request, &key, &warnings)) {
    if (refused->reason == FailureReason::kInvalidVin &&
        request.reference.empty()) {
      refused->suggested_vins = answerer_.Suggest(request.vin);
    }
    return Admission::Refused(*std::move(refused));
  }
  const SourcePreference source = Resolve(request.source_preference);
  if (source == SourcePreference::kSnapshotOnly &&
      !answerer_.snapshot_loaded()) {
    return Admission::Refused(
        {FailureReason::kNoSnapshot,
         "no offline vPIC snapshot is loaded on this server; ask for "
         "SOURCE_PREFERENCE_LIVE_ONLY, or start it with --snapshot_path",
         false});
  }
  if (!drain_.admits()) return Admission::Refused(DrainState::ShuttingDown());
  const WaiterId id = next_waiter_.fetch_add(1);
  // A cache hit is answered here, on the caller's thread, without a hop
  // through the loop (the cache is safe to read from any thread).
  if (source != SourcePreference::kSnapshotOnly) {
    if (auto cached = answerer_.LookupCache(key, clock_->Now())) {
      Answerer::AnswerHit(listener, std::move(cached));
      return Admission::Admitted(id);
    }
  }
  // Rule 18: a reference request asked of the snapshot alone is answered
  // here too, on the caller's thread (the snapshot builds its answer once
  // per key): no hop through the loop.
  if (source == SourcePreference::kSnapshotOnly && key.is_reference()) {
    if (auto answer = answerer_.SnapshotAnswerNow(key)) {
      Answerer::AnswerHit(listener, std::move(answer));
      return Admission::Admitted(id);
    }
  }
  if (admitted_.fetch_add(1) >= options_.max_waiters) {
    admitted_.fetch_sub(1);
    return Admission::Refused(
        {FailureReason::kOverloaded,
         absl::StrCat("the server has ", options_.max_waiters,
                      " decodes in progress; try again shortly"),
         true});
  }
  const absl::Time deadline = request.timeout == absl::InfiniteDuration()
                                  ? absl::InfiniteFuture()
                                  : clock_->Now() + request.timeout;
  Waiter waiter;
  waiter.listener = listener;
  waiter.deadline = deadline;
  waiter.source = source;
  waiter.priority = request.priority;
  waiter.explain = request.explain;
  if (!request.tenant.empty()) waiter.tenant = request.tenant;
  Post([this, id, key, warnings = std::move(warnings), waiter,
        stagger = request.stagger] {
    OnSubmit(id, key, warnings, waiter, stagger);
  });
  return Admission::Admitted(id);
}

bool Engine::CanAnswerInvalidVin(absl::string_view vin,
                                 SourcePreference source) const {
  // LIVE_ONLY means never the snapshot, an invalid VIN's answer included.
  if (!answerer_.snapshot_loaded() ||
      Resolve(source) == SourcePreference::kLiveOnly) {
    return false;
  }
  return snapshot::Snapshot::CheckInput(vin::Normalize(vin)).ok();
}

std::shared_ptr<const DecodeResult> Engine::InvalidVinAnswer(
    const std::string& vin, int model_year, SourcePreference source,
    const std::vector<std::string>& suggestions) const {
  if (!CanAnswerInvalidVin(vin, source)) return nullptr;
  coalesce::FlightKey key;
  key.vin = vin::Normalize(vin);
  key.model_year = model_year;
  // Encoded once, with the corrections.
  std::shared_ptr<const DecodeResult> answer =
      answerer_.SnapshotAnswerNow(key, /*encoded=*/false);
  if (answer == nullptr || answer->vin.empty()) return nullptr;
  auto r = std::make_shared<DecodeResult>(*answer);
  AddVpicCorrections(key.vin, suggestions, r.get());
  if (options_.encoder) {
    r->encoded = std::make_shared<const std::string>(options_.encoder(*r));
  }
  return r;
}

SourcePreference Engine::Resolve(SourcePreference requested) const {
  return ResolveSource(requested, options_.default_source,
                       answerer_.snapshot_loaded());
}

void Engine::Cancel(WaiterId id) {
  Post([this, id] {
    RemoveWaiter(id, {FailureReason::kCancelled, "the caller cancelled", false});
  });
}

void Engine::Drain() {
  if (!drain_.Request(DrainState::Phase::kDraining)) return;
  Post([this] {
    drain_.Enter(DrainState::Phase::kDraining);
    FailWaitingFlights(DrainState::ShuttingDown());
  });
}

void Engine::Shutdown() {
  if (!drain_.Request(DrainState::Phase::kStopped)) return;
  Post([this] {
    drain_.Enter(DrainState::Phase::kStopped);
    FailEverything(DrainState::ShuttingDown());
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

void Engine::Post(std::function<void()> task) { loop_->Post(std::move(task)); }

// ---- The loop ----

void Engine::Run() {
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (stop_ && !loop_->has_posted()) break;
    }
    Turn(absl::Seconds(1));
  }
}

void Engine::RunOnce() { Turn(absl::ZeroDuration()); }

// One turn of the engine's loop: a wait for I/O (libcurl's sockets), a
// posted task, the next timer, or the next token at the upstream gate (at
// most `max_wait`); then the ready I/O, posted tasks and due timers
// (EventLoop::RunOnce), the attempts that may start, and the stats.
void Engine::Turn(absl::Duration max_wait) {
  absl::Duration wait = max_wait;
  const absl::Time now = clock_->Now();
  if (auto start = attempts_.NextStart(now)) {
    wait = std::min(wait, *start - now);
  }
  loop_->RunOnce(std::max(wait, absl::ZeroDuration()));
  StartReadyAttempts();
  PublishStats();
}

void Engine::PublishStats() {
  counts_.flights = table_.flights();
  counts_.waiters = table_.waiters();
  counts_.pending_wakeups = scheduler_.pending();
  counts_.upstream_active = attempts_.active();
  counts_.waiting_for_upstream = attempts_.waiting();
  counts_.upstream_requests = attempts_.counts().requests;
  counts_.upstream_batch_requests = attempts_.counts().batch_requests;
  counts_.upstream_vins = attempts_.counts().vins;
  counts_.pushbacks = attempts_.counts().pushbacks;
  counts_.upstream_rate_per_minute = budget_->EffectiveRatePerMinute();
  counts_.cache_size = cache_.size();
  metrics_->flights_in_progress.Set(static_cast<double>(counts_.flights));
  metrics_->waiting_for_rate.Set(
      static_cast<double>(counts_.waiting_for_upstream));
  metrics_->scheduler_pending.Set(static_cast<double>(counts_.pending_wakeups));
  metrics_->cache_entries.Set(static_cast<double>(counts_.cache_size));
  metrics_->upstream_rate_per_minute.Set(
      std::max(0.0, counts_.upstream_rate_per_minute));
  absl::MutexLock lock(&mu_);
  stats_ = counts_;
  stats_changed_.SignalAll();
}

}  // namespace engine
