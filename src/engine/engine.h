// DecodeEngine: validate -> cache -> flight table -> scheduler -> vPIC.
//
// Owns one loop thread that owns every mutable structure of the decode path:
// the flight table, the result cache, the retry scheduler, the upstream gate
// and budget, and the vPIC client. Public methods are thread-safe; they
// validate on the caller's thread and post the rest to the loop. Listener
// callbacks run on the loop.
//
// Tests may instead drive the loop themselves (LoopMode::kManual: RunOnce()
// on the test's thread), with a scripted vpic::UpstreamClient and a fake clock.
#ifndef VIN_ENGINE_ENGINE_H_
#define VIN_ENGINE_ENGINE_H_

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coalesce/flight_table.h"
#include "domain/priority.h"
#include "engine/answerer.h"
#include "engine/attempt_runner.h"
#include "engine/drain_state.h"
#include "engine/engine_options.h"
#include "engine/fleet_coordinator.h"
#include "engine/flight_state.h"
#include "engine/result_cache.h"
#include "engine/waiter_deadlines.h"
#include "engine_api/fleet_backend.h"
#include "engine_api/types.h"
#include "loop/event_loop.h"
#include "metrics/metrics.h"
#include "retry/jitter.h"
#include "retry/scheduler.h"
#include "snapshot/snapshot_store.h"
#include "upstream/local_budget.h"
#include "upstream/upstream_gate.h"
#include "vin/vin.h"
#include "vpic/upstream_client.h"

namespace engine {

struct DecodeRequest {
  std::string vin;     // as sent; normalised by the engine
  // Rule 18: instead of a VIN, one of vPIC's reference requests
  // (domain::DecodeKey::reference, checked and normalised by the caller);
  // `vin`, `model_year`, `check_digit_policy` and `allow_partial` are then
  // unused. Its answer is DecodeResult::document.
  std::string reference;
  int model_year = 0;  // 0 = no hint
  vin::CheckDigitPolicy check_digit_policy = vin::CheckDigitPolicy::kEnforce;
  // Rule 18: a partial VIN ('*' for an unknown position, or fewer than 17
  // characters) is decoded, checked for what can be checked; without it,
  // refused as today.
  bool allow_partial = false;
  // Rule 21: a snapshot answer for this waiter names each variable's source
  // (DecodeResult::provenance); others are spared the cost.
  bool explain = false;
  // The waiter leaves (DEADLINE_EXCEEDED, or UNAVAILABLE when the next
  // retry, or its turn at the upstream rate, would come after it) when this
  // much time has passed from Submit.
  absl::Duration timeout = absl::InfiniteDuration();
  // Batch items: a new flight waits a random [0, retry_base) before its
  // first attempt (DESIGN rule 7).
  bool stagger = false;
  SourcePreference source_preference = SourcePreference::kUnspecified;
  // Rule 17: how urgent it is, and who asks (the server resolves both).
  domain::Priority priority = domain::Priority::kInteractive;
  std::string tenant{domain::kDefaultTenant};
};

struct EngineStats {
  size_t flights = 0;
  size_t waiters = 0;
  size_t pending_wakeups = 0;  // retry wake-ups, staggers and deadlines
  size_t upstream_active = 0;  // HTTP requests in progress
  size_t waiting_for_upstream = 0;  // flights queued for a token or a slot
  uint64_t upstream_requests = 0;  // started since the engine began
  uint64_t upstream_batch_requests = 0;  // of which DecodeVINValuesBatch
  uint64_t upstream_vins = 0;  // VINs carried by those requests
  uint64_t retries_refused = 0;  // by the retry budget
  uint64_t pushbacks = 0;        // 429 / Retry-After pauses
  double upstream_rate_per_minute = 0;  // effective; <= 0 unlimited
  size_t cache_size = 0;
};

enum class LoopMode {
  kOwnThread,  // the engine runs its loop on a thread of its own
  kManual,     // tests call RunOnce() on their thread
};

class Engine : private AttemptRunner::Flights,
               private FleetCoordinator::Flights {
 public:
  using WaiterId = coalesce::WaiterId;

  static absl::StatusOr<std::unique_ptr<Engine>> Create(EngineOptions options);
  // Tests: over `transport` instead of a vPIC client of options'
  // vpic_base_url.
  static absl::StatusOr<std::unique_ptr<Engine>> Create(
      EngineOptions options, std::unique_ptr<vpic::UpstreamClient> transport,
      LoopMode mode = LoopMode::kOwnThread);
  // Fails every remaining waiter with SHUTTING_DOWN, then stops the loop.
  ~Engine();

  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Validates `request` and starts or joins its decode. A refusal, on which
  // the listener is never called, is a Failure: INVALID_VIN (the message
  // names the rule broken), INVALID_REQUEST (a model-year hint out of
  // range), SHUTTING_DOWN and OVERLOADED (retryable), NO_SNAPSHOT
  // (SNAPSHOT_ONLY without a snapshot loaded).
  // Otherwise `listener` receives the waiter's events and must stay valid
  // until its OnDone/OnFailed. They come from the engine's loop thread, or,
  // for a cache hit, from the caller's thread inside Submit (QUEUED, then
  // DONE, before Submit returns).
  Admission Submit(const DecodeRequest& request, DecodeListener* listener);
  // The waiter leaves its flight and gets OnFailed(CANCELLED), unless it has
  // already had its terminal event. A flight left without waiters is
  // cancelled: no further upstream request is made for it.
  void Cancel(WaiterId id);
  // Rule 21: vPIC's answer to the invalid VIN `vin` (refused by Submit with
  // INVALID_VIN and `suggestions`), for vPIC's paths, which answer invalid
  // VINs as vPIC does: the loaded snapshot's decode of the VIN as it stands
  // (17 characters of digits and letters, or a partial VIN) with vPIC's
  // correction fields (AddVpicCorrections); nullptr without a snapshot or
  // for what it cannot read. Any thread; never upstream.
  // Whether InvalidVinAnswer can answer an invalid `vin` for a request of
  // `source` (a snapshot is loaded, the preference is not LIVE_ONLY once
  // resolved, and `vin` is 3 to 17 digits, letters or '*' after the WMI).
  bool CanAnswerInvalidVin(absl::string_view vin,
                           SourcePreference source) const;
  std::shared_ptr<const DecodeResult> InvalidVinAnswer(
      const std::string& vin, int model_year, SourcePreference source,
      const std::vector<std::string>& suggestions) const;
  // The start of a graceful stop: admits no new work, starts no new upstream
  // request (first attempt or retry), and fails at once, with
  // SHUTTING_DOWN (retryable), every flight that is not waiting for a
  // request already in flight: those waiting for a retry, their stagger or
  // their turn at the rate cap. Requests in flight may still finish.
  void Drain();
  // Stops admitting work and fails every waiter with SHUTTING_DOWN.
  void Shutdown();

  // LoopMode::kManual only: one turn of the loop on the caller's thread
  // (posted work, due timers, ready attempts, finished requests), without
  // waiting.
  void RunOnce();

  EngineStats Stats() const;
  // Blocks until `pred(Stats())` holds or `timeout` passes; returns whether
  // it held. For tests and benchmarks.
  bool WaitForStats(std::function<bool(const EngineStats&)> pred,
                    absl::Duration timeout) const;

 private:
  using Table = coalesce::FlightTable<FlightState, Waiter>;
  using Flight = Table::Flight;

  Engine(EngineOptions options, std::unique_ptr<loop::EventLoop> loop,
         std::unique_ptr<vpic::UpstreamClient> transport, LoopMode mode);
  // Attaches the fleet (if any) to the loop and makes its budget, else the
  // local budget.
  std::unique_ptr<upstream::UpstreamBudget> MakeBudget();

  void Post(std::function<void()> task);
  void Run();
  void Turn(absl::Duration max_wait);
  void PublishStats();

  // Loop-thread only below. The flight lifecycle (flights.cc):
  void OnSubmit(WaiterId id, coalesce::FlightKey key,
                std::vector<vpic::Note> warnings, Waiter waiter, bool stagger);
  // Answers a new waiter that needs no flight (stopping, SNAPSHOT_ONLY, a
  // cache hit, a deadline already past, the breaker open): whether it did.
  bool AnswerWithoutFlight(const coalesce::FlightKey& key,
                           const std::vector<vpic::Note>& warnings,
                           Waiter& waiter, absl::Time now);
  // The waiter `id` made flight `f`: the fleet, or this replica, decodes it.
  void StartFlight(Flight* f, WaiterId id, std::vector<vpic::Note> warnings,
                   bool stagger, absl::Time leave_at, absl::Time now);
  // The waiter `id` joined the running flight `f` (rule 5).
  void JoinFlight(Flight* f, WaiterId id, absl::Time leave_at, absl::Time now);
  // A flight counts for the most urgent of its waiters (rule 17): `w`'s
  // priority, when more urgent, moves it (at the gate, keeping its place;
  // in a bulk item's stagger, to the gate now). Returns false when that
  // ended the flight (the breaker refused it).
  bool Hurry(Flight* f, const Waiter& w);
  // The wake-up at `at` of the flight's stagger or retry wait: it goes to
  // the gate then.
  retry::Scheduler::TimerId WakeUpAt(const Flight& f, absl::Time at);
  SourcePreference Resolve(SourcePreference requested) const;
  // Removes one waiter from its flight with `failure` (attempts and the
  // last upstream error are filled in from the flight when unset:
  // FlightState::WithHistory).
  void RemoveWaiter(WaiterId id, Failure failure);
  // Deadlines (deadlines.cc, the rule in waiter_deadlines.h): the waiter
  // leaves at `leave_at`.
  void WatchDeadline(WaiterId id, Waiter* w, absl::Time leave_at);
  // When the flight's next upstream request is expected to start: its
  // retry wake-up, or its turn at the gate (now when neither).
  absl::Time NextStart(const Flight& f, absl::Time now) const;
  // What a waiter leaving because its deadline falls before `start` is told.
  Failure LateFailure(const Flight& f, absl::Time start, absl::Time now) const;
  // Every waiter whose deadline falls before `start` leaves with
  // LateFailure; the last one out abandons the flight. Returns whether the
  // flight is gone.
  bool LeaveIfLate(Flight* f, absl::Time start);
  void RemoveWaiters(const std::vector<WaiterId>& ids, const Failure& failure);
  void Complete(Flight* f, vpic::Decoded decoded);
  void FailFlight(Flight* f, Failure failure);
  void AbandonIfEmpty(Flight* f);
  // Ends the flight's phase and undoes its work: its wake-up cancelled,
  // its place at the gate given up, or the request it is in left (aborted
  // when no flight waits for it any more).
  void StopFlightWork(Flight* f);
  void FailEverything(const Failure& failure);
  // Fails the flights that wait for anything but a request in flight.
  void FailWaitingFlights(const Failure& failure);
  void Summarise(const Flight* f, bool ok, std::string outcome,
                 size_t waiters);
  // Starts a flight's attempts on this replica: counts its first attempt,
  // sends its creator's QUEUED (when still owed), lets waiters that cannot
  // be served in time leave, then staggers or queues it. May erase it.
  void BeginAttempts(Flight* f, WaiterId creator, bool stagger);

  // What the fleet decided (FleetCoordinator::Flights, fleet.cc):
  void DecodeHere(const coalesce::FlightKey& key, uint64_t fid,
                  bool first) override;
  void DecodedElsewhere(const coalesce::FlightKey& key, uint64_t fid) override;
  void AnswerFromFleet(const coalesce::FlightKey& key, uint64_t fid,
                       std::shared_ptr<const DecodeResult> answer,
                       bool hit) override;
  void RelayRetrying(const coalesce::FlightKey& key, uint64_t fid,
                     const Retrying& retrying) override;
  void RelayFailed(const coalesce::FlightKey& key, uint64_t fid,
                   const Failure& failure) override;
  void Remember(const coalesce::FlightKey& key,
                std::shared_ptr<const DecodeResult> answer) override;
  void BreakerElsewhere(const FleetEvent& event) override;

  // Attempts through the upstream gate (attempts.cc; the requests are
  // AttemptRunner's):
  // Queues the flight for its next attempt; waiters whose deadline falls
  // before its estimated start leave at once. May erase the flight.
  void EnqueueAttempt(Flight* f);
  void StartReadyAttempts();
  // AttemptRunner::Flights:
  bool Sending(const AttemptRunner::Ticket& t) override;
  void Carried(const AttemptRunner::Ticket& t,
               AttemptRunner::RequestId id) override;
  void Answered(const AttemptRunner::Ticket& t, AttemptRunner::RequestId id,
                vpic::Outcome outcome) override;
  void Delayed() override;
  void Unreachable() override;
  void Resent(const AttemptRunner::Ticket& t, int extra) override;
  // The flight leaves the live path because the breaker is open.
  void FailUnreachable(Flight* f, absl::optional<vpic::UpstreamError> error);
  void HandleOutcome(Flight* f, vpic::Outcome outcome);
  void ScheduleRetry(Flight* f, const vpic::Outcome& outcome);

  const EngineOptions options_;
  const retry::Clock* const clock_;
  std::unique_ptr<metrics::ServiceMetrics> own_metrics_;  // when none given
  metrics::ServiceMetrics* const metrics_;
  DrainState drain_;
  std::atomic<WaiterId> next_waiter_{1};
  std::atomic<size_t> admitted_{0};

  // The engine's own event loop: posted tasks, the scheduler, the clock,
  // and the vPIC client's sockets and timer (its I/O sources).
  const std::unique_ptr<loop::EventLoop> loop_;

  // A leaf lock, as is the loop's posted-task lock: held while taking
  // nothing. (Callers' locks, such as server::BatchCall::mu_, are held
  // while taking the loop's, through Cancel's Post.)
  mutable absl::Mutex mu_;  // protects the fields below
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  EngineStats stats_ ABSL_GUARDED_BY(mu_);
  mutable absl::CondVar stats_changed_;  // signalled when stats_ is published

  // Owned by the loop thread (checked in debug builds by
  // loop_->AssertOnLoopThread()).
  const LoopMode mode_;
  retry::Scheduler& scheduler_;  // loop_'s
  retry::Jitter jitter_;
  Table table_;
  ResultCache cache_;
  Answerer answerer_;  // after cache_ and scheduler_, which it uses
  // The fleet's budget (the fleet attached to loop_ first), or the local one.
  std::unique_ptr<upstream::UpstreamBudget> budget_;
  // The gate, the requests and the vPIC client (after loop_: its sockets
  // are the loop's; after budget_, which it uses).
  AttemptRunner attempts_;
  // Who decodes each flight: the fleet's coordinator (after the fleet is
  // attached to loop_, by budget_), or the local one.
  std::unique_ptr<FleetCoordinator> fleet_;
  EngineStats counts_;  // the loop's running totals, published to stats_

  std::thread thread_;  // last: starts after everything above exists
};

}  // namespace engine

#endif  // VIN_ENGINE_ENGINE_H_
