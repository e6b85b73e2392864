#include "engine/source_policy.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace engine {

SourcePreference ResolveSource(SourcePreference requested,
                               SourcePreference server_default,
                               bool snapshot_loaded) {
  if (requested != SourcePreference::kUnspecified) return requested;
  if (server_default != SourcePreference::kUnspecified) return server_default;
  return snapshot_loaded ? SourcePreference::kLiveThenSnapshot
                         : SourcePreference::kLiveOnly;
}

bool SnapshotAnswersAfter(SourcePreference source, FailureReason reason) {
  if (source != SourcePreference::kLiveThenSnapshot) return false;
  return reason == FailureReason::kUpstreamUnavailable ||
         reason == FailureReason::kUpstreamRejected ||
         reason == FailureReason::kDeadlineExceeded;
}

bool StaleAnswersAfter(SourcePreference source, FailureReason reason) {
  if (source != SourcePreference::kLiveOnly &&
      source != SourcePreference::kLiveThenSnapshot) {
    return false;
  }
  return reason == FailureReason::kUpstreamUnavailable ||
         reason == FailureReason::kDeadlineExceeded;
}

namespace {

// A program's way to see that the breaker found vPIC unreachable (rule 13)
// in an answer that stood in: the time, never a sentence to parse.
void NoteUnreachable(const Failure& failure, std::vector<vpic::Note>* notes) {
  if (failure.unreachable_since == absl::InfinitePast()) return;
  notes->push_back({domain::kUnreachableNote,
                    domain::UtcSeconds(failure.unreachable_since)});
}

}  // namespace

std::shared_ptr<const DecodeResult> StaleAnswer(
    const DecodeResult& cached, absl::Duration age, const Failure& failure,
    const ResultEncoder& encoder, const ResultDecoder& decoder) {
  auto result = std::make_shared<DecodeResult>();
  if (cached.encoded != nullptr && cached.source == Source::kCache) {
    // Only bytes (DecodeResult's contract): read them back.
    if (!decoder || !decoder(*cached.encoded, result.get())) return nullptr;
  } else {
    *result = cached;
  }
  result->vin = cached.vin;
  result->source = Source::kCache;  // with its original decode_time
  result->attempts = failure.attempts;
  result->notes.push_back(
      {"stale",
       absl::StrCat("answered from a cache entry ",
                    absl::FormatDuration(absl::Trunc(age, absl::Seconds(1))),
                    " old (older than --cache_ttl) because the live decode "
                    "failed: ",
                    failure.message)});
  NoteUnreachable(failure, &result->notes);
  result->encoded = nullptr;
  if (encoder && result->document == nullptr) {  // (a document is its bytes)
    result->encoded = std::make_shared<const std::string>(encoder(*result));
  }
  return result;
}

namespace {

// The live_failure note (and the unreachable one) of an answer standing in
// for `live_failure`.
void NoteLiveFailure(const Failure& live_failure,
                     std::vector<vpic::Note>* notes) {
  notes->push_back(
      {"live_failure",
       absl::StrCat("answered from the offline snapshot because the live "
                    "decode failed: ",
                    live_failure.message)});
  NoteUnreachable(live_failure, notes);
}

// Rule 18: a reference request's answer from the snapshot (its document,
// the same object for the same key), or nullptr when it does not hold it.
std::shared_ptr<const DecodeResult> SnapshotReferenceAnswer(
    const snapshot::Snapshot& snap, const coalesce::FlightKey& key,
    const Failure* live_failure, absl::Time wall_now) {
  auto doc = snap.Reference(key.reference);
  if (!doc.ok()) return nullptr;
  auto result = std::make_shared<DecodeResult>();
  result->document = *std::move(doc);
  result->source = Source::kSnapshot;
  result->attempts = live_failure != nullptr ? live_failure->attempts : 0;
  result->notes.push_back({"snapshot", snap.reference_note()});
  if (live_failure != nullptr) NoteLiveFailure(*live_failure, &result->notes);
  result->decode_time = wall_now;
  return result;
}

}  // namespace

std::shared_ptr<const DecodeResult> SnapshotAnswer(
    const snapshot::Snapshot& snap, const coalesce::FlightKey& key,
    const std::vector<vpic::Note>& warnings, const Failure* live_failure,
    absl::Time wall_now, const ResultEncoder& encoder, bool explain) {
  if (key.is_reference()) {
    return SnapshotReferenceAnswer(snap, key, live_failure, wall_now);
  }
  const int reference_year = static_cast<int>(
      absl::ToCivilYear(wall_now, absl::UTCTimeZone()).year());
  auto decoded = snap.Decode(key.vin, key.model_year, reference_year, explain);
  if (!decoded.ok()) return nullptr;
  auto result = std::make_shared<DecodeResult>();
  result->vin = key.vin;
  result->vehicle = std::move(decoded->vehicle);
  result->source = Source::kSnapshot;
  result->attempts = live_failure != nullptr ? live_failure->attempts : 0;
  result->notes = warnings;
  for (auto& n : decoded->notes) result->notes.push_back(std::move(n));
  if (live_failure != nullptr) NoteLiveFailure(*live_failure, &result->notes);
  result->decode_time = wall_now;
  result->model_year_candidates = std::move(decoded->model_year_candidates);
  result->provenance = std::move(decoded->provenance);
  if (encoder) {
    result->encoded = std::make_shared<const std::string>(encoder(*result));
  }
  return result;
}

}  // namespace engine
