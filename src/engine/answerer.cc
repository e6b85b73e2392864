#include "engine/answerer.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/source_policy.h"
#include "snapshot/reference_data.h"
#include "vin/vin.h"

namespace engine {

Answerer::Answerer(Deps deps)
    : deps_(std::move(deps)),
      suggestion_budget_(deps_.suggestions_per_second) {}

std::vector<std::string> Answerer::Suggest(absl::string_view input) {
  if (deps_.snapshots == nullptr) return {};
  const std::string vin = vin::Normalize(input);
  // Only what Suggest can read spends the budget: input it refuses at once
  // (another length, punctuation, '*') must not use up others' share.
  if (!snapshot::Snapshot::SuggestReads(vin)) return {};
  std::shared_ptr<const snapshot::Snapshot> snap = deps_.snapshots->Current();
  if (snap == nullptr || !suggestion_budget_.Take(deps_.clock->Now())) {
    return {};
  }
  const absl::Time wall = deps_.clock->WallNow();
  const int reference_year =
      static_cast<int>(absl::ToCivilYear(wall, absl::UTCTimeZone()).year());
  return snap->Suggest(vin, reference_year, kMaxSuggestions);
}

std::shared_ptr<const DecodeResult> Answerer::LookupCache(
    const coalesce::FlightKey& key, absl::Time now) {
  if (!deps_.cache->enabled()) return nullptr;
  std::shared_ptr<const DecodeResult> cached = deps_.cache->Lookup(key, now);
  if (cached != nullptr) deps_.metrics->cache_hits.Add();
  return cached;
}

void Answerer::AnswerHit(DecodeListener* listener,
                         std::shared_ptr<const DecodeResult> result) {
  listener->OnQueued({});
  listener->OnDone(std::move(result));
}

bool Answerer::snapshot_loaded() const {
  return deps_.snapshots != nullptr && deps_.snapshots->Current() != nullptr;
}

void Answerer::CountHit() { deps_.metrics->cache_hits.Add(); }

void Answerer::CountMiss() { deps_.metrics->cache_misses.Add(); }

void Answerer::Queue(Waiter& w, const Queued& queued) {
  if (w.queued) return;
  w.queued = true;
  if (queued.coalesced) deps_.metrics->coalesced_waiters.Add();
  w.listener->OnQueued(queued);
}

void Answerer::Retry(Waiter& w, const Retrying& retrying) {
  OweQueued(w);
  w.listener->OnRetrying(retrying);
}

void Answerer::OweQueued(Waiter& w) { Queue(w, {}); }

void Answerer::Done(Waiter& w, std::shared_ptr<const DecodeResult> result) {
  OweQueued(w);
  w.listener->OnDone(std::move(result));
  Release(w);
}

void Answerer::Fail(Waiter& w, const Failure& failure,
                    const coalesce::FlightKey& key,
                    const std::vector<vpic::Note>& warnings) {
  OweQueued(w);
  if (StaleAnswersAfter(w.source, failure.reason)) {
    if (auto stale = StaleAnswerFor(key, failure)) {
      w.listener->OnDone(std::move(stale));
      Release(w);
      return;
    }
  }
  if (SnapshotAnswersAfter(w.source, failure.reason)) {
    if (auto answer = SnapshotAnswerFor(key, warnings, &failure, w.explain)) {
      w.listener->OnDone(std::move(answer));
      Release(w);
      return;
    }
  }
  w.listener->OnFailed(failure);
  Release(w);
}

void Answerer::AnswerFromSnapshot(Waiter& w, const coalesce::FlightKey& key,
                                  const std::vector<vpic::Note>& warnings) {
  OweQueued(w);
  if (auto answer = SnapshotAnswerFor(key, warnings, nullptr, w.explain)) {
    Done(w, std::move(answer));
    return;
  }
  Fail(w,
       domain::FailureOf(
           FailureReason::kNoSnapshot,
           key.is_reference()
               ? absl::StrCat("the offline vPIC snapshot does not hold the "
                              "data of ",
                              key.reference, " (it answers ",
                              snapshot::ReferenceEndpointsOffline(), ")")
               : std::string(
                     "the offline vPIC snapshot could not decode this VIN"),
           domain::ErrorReason::kSnapshotCannotDecode),
       key, warnings);
}

std::shared_ptr<const DecodeResult> Answerer::StaleAnswerFor(
    const coalesce::FlightKey& key, const Failure& failure) {
  absl::optional<ResultCache::Stale> stale =
      deps_.cache->LookupStale(key, deps_.clock->Now());
  if (!stale) return nullptr;
  return StaleAnswer(*stale->answer, stale->age, failure, deps_.encoder,
                     deps_.decoder);
}

std::shared_ptr<const DecodeResult> Answerer::SnapshotAnswerFor(
    const coalesce::FlightKey& key, const std::vector<vpic::Note>& warnings,
    const Failure* live_failure, bool explain, bool encoded) const {
  if (deps_.snapshots == nullptr) return nullptr;
  std::shared_ptr<const snapshot::Snapshot> snap = deps_.snapshots->Current();
  if (snap == nullptr) return nullptr;
  static const ResultEncoder kNoEncoder;  // bound, not a copy per answer
  const ResultEncoder& encoder = encoded ? deps_.encoder : kNoEncoder;
  return SnapshotAnswer(*snap, key, warnings, live_failure,
                        deps_.clock->WallNow(), encoder, explain);
}

// The waiter has had its terminal event: the engine never touches its
// listener again.
void Answerer::Release(Waiter& w) {
  deps_.scheduler->Cancel(w.deadline_timer);
  w.deadline_timer = 0;
  w.listener = nullptr;
  deps_.admitted->fetch_sub(1);
}

}  // namespace engine
