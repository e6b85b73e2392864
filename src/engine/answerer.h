// The answers waiters get (DESIGN rules 6, 8 and the source preference):
// every event a waiter gets goes through here. Its first is QUEUED, sent
// exactly once, also when its first answer is already its last (a waiter
// told it shares a running flight is counted as coalesced then); every live
// request counts one cache hit or miss; a waiter whose live decode failed for
// good is answered by the best real answer its source preference allows (the
// snapshot, with a `live_failure` note) before it is told the failure; a
// waiter's terminal answer releases it (its deadline timer, its place among the
// admitted).
//
// Owned by the engine. LookupCache() and AnswerHit() may be called from any
// thread (the cache is thread-safe, the counters atomic); everything else
// runs on the engine's loop thread.
#ifndef VIN_ENGINE_ANSWERER_H_
#define VIN_ENGINE_ANSWERER_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "coalesce/flight_table.h"
#include "domain/priority.h"
#include "engine/result_cache.h"
#include "engine/suggestion_budget.h"
#include "engine_api/types.h"
#include "metrics/metrics.h"
#include "retry/clock.h"
#include "retry/scheduler.h"
#include "snapshot/snapshot_store.h"

namespace engine {

// One caller waiting on a flight.
struct Waiter {
  DecodeListener* listener = nullptr;
  // When it leaves the live path (its deadline, less the snapshot
  // fallback's margin); InfiniteFuture for none.
  absl::Time deadline = absl::InfiniteFuture();
  retry::Scheduler::TimerId deadline_timer = 0;
  SourcePreference source = SourcePreference::kLiveOnly;  // resolved
  bool queued = false;  // its QUEUED has been sent
  // Rule 17: its urgency and its tenant.
  domain::Priority priority = domain::Priority::kInteractive;
  std::string tenant{domain::kDefaultTenant};
  bool explain = false;  // rule 21: a snapshot answer with its provenance
};

class Answerer {
 public:
  struct Deps {
    const retry::Clock* clock = nullptr;
    ResultCache* cache = nullptr;
    metrics::ServiceMetrics* metrics = nullptr;
    snapshot::SnapshotStore* snapshots = nullptr;  // may be null
    ResultEncoder encoder;                         // may be empty
    retry::Scheduler* scheduler = nullptr;  // where deadline timers live
    std::atomic<size_t>* admitted = nullptr;  // waiters admitted, released here
    ResultDecoder decoder;  // may be empty
    int suggestions_per_second = 0;  // rule 21 (SuggestionBudget)
  };
  explicit Answerer(Deps deps);

  // ---- Any thread ----
  // The cache's answer for a new request, counted as a hit; nullptr (not
  // counted: see CountMiss) when the cache cannot answer.
  std::shared_ptr<const DecodeResult> LookupCache(const coalesce::FlightKey& key,
                                                  absl::Time now);
  // Answers a caller that was never admitted as a waiter (a cache hit
  // inside Engine::Submit): QUEUED, then DONE.
  static void AnswerHit(DecodeListener* listener,
                        std::shared_ptr<const DecodeResult> result);
  // Whether a snapshot is loaded now.
  bool snapshot_loaded() const;
  // Rule 21: the loaded snapshot's corrections of the invalid VIN `input`
  // (snapshot::Snapshot::Suggest, at most kMaxSuggestions), within the
  // budget; none without a snapshot or past the budget.
  static constexpr size_t kMaxSuggestions = 5;
  std::vector<std::string> Suggest(absl::string_view input);
  // The loaded snapshot's answer for `key` now (no live failure to note),
  // or nullptr when none is loaded or it cannot answer (Snapshot is safe
  // to read from any thread). Engine::Submit answers a SNAPSHOT_ONLY
  // reference request with it on the caller's thread, as a cache hit.
  // Not `encoded`: without its bytes, for a caller that adds to it and
  // encodes it once (Engine::InvalidVinAnswer).
  std::shared_ptr<const DecodeResult> SnapshotAnswerNow(
      const coalesce::FlightKey& key, bool encoded = true) const {
    return SnapshotAnswerFor(key, {}, nullptr, false, encoded);
  }

  // ---- Loop thread ----
  void CountHit();   // a fleet cache answer
  void CountMiss();  // a live request the cache could not answer
  // Sends `queued` unless the waiter has had its QUEUED; a coalesced one is
  // counted (vin_coalesced_waiters_total).
  void Queue(Waiter& w, const Queued& queued);
  // Sends RETRYING (after an owed QUEUED): its flight's attempt failed and
  // another is scheduled, here or on the replica that decodes it.
  void Retry(Waiter& w, const Retrying& retrying);
  // The waiter's terminal answers; each sends an owed QUEUED first and
  // releases the waiter.
  void Done(Waiter& w, std::shared_ptr<const DecodeResult> result);
  // After a failure: a stale cache entry (rule 15), else the snapshot's
  // answer, when the waiter's preference allows it after `failure`
  // (source_policy.h), else FAILED.
  void Fail(Waiter& w, const Failure& failure, const coalesce::FlightKey& key,
            const std::vector<vpic::Note>& warnings);
  // A SNAPSHOT_ONLY request: the snapshot answers, or NO_SNAPSHOT.
  void AnswerFromSnapshot(Waiter& w, const coalesce::FlightKey& key,
                          const std::vector<vpic::Note>& warnings);

 private:
  // The stale cache entry of `key` as an answer with a `stale` note, or
  // nullptr when there is none.
  std::shared_ptr<const DecodeResult> StaleAnswerFor(
      const coalesce::FlightKey& key, const Failure& failure);
  // The loaded snapshot's answer, or nullptr when none is loaded or it
  // cannot decode the VIN; its bytes made when `encoded`.
  std::shared_ptr<const DecodeResult> SnapshotAnswerFor(
      const coalesce::FlightKey& key, const std::vector<vpic::Note>& warnings,
      const Failure* live_failure, bool explain, bool encoded = true) const;
  void OweQueued(Waiter& w);
  void Release(Waiter& w);

  const Deps deps_;
  SuggestionBudget suggestion_budget_;
};

}  // namespace engine

#endif  // VIN_ENGINE_ANSWERER_H_
