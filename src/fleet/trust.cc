#include "fleet/trust.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "fleet/event_mapping.h"
#include "fleet/redis_value.h"

namespace fleet {
namespace {

template <typename T>
Verdict<T> Reject(Rejection what, std::string why) {
  Verdict<T> v;
  v.rejected = what;
  v.why = std::move(why);
  return v;
}

template <typename T>
Verdict<T> Accept(T value) {
  Verdict<T> v;
  v.value = std::move(value);
  return v;
}

// `bytes` parse as a result of `vin`: nullopt, else why not (and which).
absl::optional<std::pair<bool, std::string>> WrongResult(
    const Trust& trust, const std::string& bytes, const std::string& vin,
    engine::DecodeResult* out) {
  if (!trust.read_result || !trust.read_result(bytes, out)) {
    return std::make_pair(false,
                          std::string("not a vin.v1.DecodeResult with a VIN "
                                      "and a decode time"));
  }
  if (out->vin != vin) {
    return std::make_pair(true, absl::StrCat("a result of another VIN (",
                                             PrintableText(out->vin, 17), ")"));
  }
  return absl::nullopt;
}

// A reference request's cached answer (rule 18), its seal checked: only
// this version writes them, always sealed, and the seal's time is when it
// was stored. Its document, or why not.
Verdict<std::string> CheckCachedReference(const Opened& opened, absl::Time now,
                                          const Trust& trust) {
  if (!opened.sealed) {
    return Reject<std::string>(Rejection::kResultUnparsable,
                               "a reference answer without its seal");
  }
  absl::optional<std::string> document = DecodeReferenceAnswer(opened.payload);
  if (!document || !engine::IsReferenceDocument(*document)) {
    return Reject<std::string>(Rejection::kResultUnparsable,
                               "not a reference answer with vPIC's document");
  }
  const absl::Time stored = absl::FromUnixMillis(opened.issued_unix_ms);
  if (stored - now > kEventMaxSkew) {
    return Reject<std::string>(Rejection::kResultFuture,
                               "stored later than now");
  }
  if (now - stored >= trust.limits.reference_ttl) {
    return Reject<std::string>(Rejection::kResultExpired,
                               "stored longer ago than --reference_ttl");
  }
  return Accept(*std::move(document));
}

}  // namespace

const char* RejectionName(Rejection r) {
  switch (r) {
    case Rejection::kResultUnparsable:
      return "result_unparsable";
    case Rejection::kResultWrongVin:
      return "result_wrong_vin";
    case Rejection::kResultWrongKey:
      return "result_wrong_key";
    case Rejection::kResultExpired:
      return "result_expired";
    case Rejection::kResultFuture:
      return "result_future";
    case Rejection::kResultUnsigned:
      return "result_unsigned";
    case Rejection::kResultBadSignature:
      return "result_bad_signature";
    case Rejection::kEventUnparsable:
      return "event_unparsable";
    case Rejection::kEventWrongVin:
      return "event_wrong_vin";
    case Rejection::kEventWrongChannel:
      return "event_wrong_channel";
    case Rejection::kEventUnsigned:
      return "event_unsigned";
    case Rejection::kEventBadSignature:
      return "event_bad_signature";
    case Rejection::kEventStale:
      return "event_stale";
    case Rejection::kEventReplayed:
      return "event_replayed";
  }
  return "unknown";
}

bool IsEventRejection(Rejection r) {
  return static_cast<int>(r) >= static_cast<int>(Rejection::kEventUnparsable);
}

Verdict<std::string> CheckCachedResult(const std::string& stored,
                                       const std::string& redis_key,
                                       const std::string& fleet_key,
                                       absl::Time now, const Trust& trust) {
  if (stored.size() > kMaxValueBytes) {
    return Reject<std::string>(
        Rejection::kResultUnparsable,
        absl::StrCat("larger than ", kMaxValueBytes, " bytes"));
  }
  auto key = ParseFleetKey(fleet_key);
  if (!key.ok()) {
    return Reject<std::string>(Rejection::kResultWrongKey,
                               std::string(key.status().message()));
  }
  auto opened = OpenSeal(stored);
  if (!opened.ok()) {
    return Reject<std::string>(Rejection::kResultUnparsable,
                               absl::StrCat("not a vin.v1.DecodeResult (",
                                            opened.status().message(), ")"));
  }
  if (trust.secret != nullptr && opened->mac.empty()) {
    return Reject<std::string>(Rejection::kResultUnsigned,
                               "not signed with the fleet's secret");
  }
  if (opened->sealed && opened->key != redis_key) {
    return Reject<std::string>(Rejection::kResultWrongKey,
                               "sealed for another key");
  }
  if (trust.secret != nullptr &&
      !MacMatches(*opened, redis_key, *trust.secret)) {
    return Reject<std::string>(Rejection::kResultBadSignature,
                               "its signature does not match");
  }
  if (!key->reference.empty()) return CheckCachedReference(*opened, now, trust);
  std::string payload(opened->payload);
  engine::DecodeResult result;
  if (auto wrong = WrongResult(trust, payload, key->vin, &result)) {
    return Reject<std::string>(wrong->first ? Rejection::kResultWrongVin
                                            : Rejection::kResultUnparsable,
                               std::move(wrong->second));
  }
  // Unsealed (a replica of an older version wrote it, or anyone): its
  // decode names the year, which must not contradict the key's hint.
  if (!opened->sealed && key->model_year != 0 &&
      result.vehicle.model_year != 0 &&
      result.vehicle.model_year != key->model_year) {
    return Reject<std::string>(
        Rejection::kResultWrongKey,
        absl::StrCat("a result of model year ", result.vehicle.model_year,
                     " under the hint ", key->model_year));
  }
  // A decode time ahead of this replica's clock (beyond the skew replicas
  // may have) would keep a forged value fresh for ever.
  if (result.decode_time - now > kEventMaxSkew) {
    return Reject<std::string>(Rejection::kResultFuture,
                               "decoded later than now");
  }
  if (now - result.decode_time >= trust.limits.cache_ttl) {
    return Reject<std::string>(Rejection::kResultExpired,
                               "decoded longer ago than --cache_ttl");
  }
  return Accept(std::move(payload));
}

Verdict<bool> EventChecks::CheckSigned(const Opened& opened,
                                       const std::string& channel,
                                       absl::Time now) {
  if (opened.mac.empty()) {
    return Reject<bool>(Rejection::kEventUnsigned,
                        "not signed with the fleet's secret");
  }
  if (opened.key != channel) {
    return Reject<bool>(Rejection::kEventWrongChannel,
                        "sealed for another channel");
  }
  if (!MacMatches(opened, channel, *trust_->secret)) {
    return Reject<bool>(Rejection::kEventBadSignature,
                        "its signature does not match");
  }
  const absl::Time issued = absl::FromUnixMillis(opened.issued_unix_ms);
  if (issued < now - kEventMaxSkew || issued > now + kEventMaxSkew) {
    return Reject<bool>(
        Rejection::kEventStale,
        absl::StrCat("issued ", absl::FormatDuration(now - issued),
                     " from this replica's clock (at most ",
                     absl::FormatDuration(kEventMaxSkew), " either way)"));
  }
  while (!seen_order_.empty() && seen_order_.front().first <= now) {
    seen_.erase(seen_order_.front().second);
    seen_order_.pop_front();
  }
  if (!seen_.insert(opened.mac).second) {
    return Reject<bool>(Rejection::kEventReplayed, "seen before");
  }
  seen_order_.emplace_back(now + 2 * kEventMaxSkew, opened.mac);
  return Accept(true);
}

Verdict<engine::FleetEvent> EventChecks::Check(const std::string& message,
                                               const std::string& channel,
                                               absl::Time now) {
  using engine::FleetEvent;
  if (message.size() > kMaxValueBytes) {
    return Reject<FleetEvent>(
        Rejection::kEventUnparsable,
        absl::StrCat("larger than ", kMaxValueBytes, " bytes"));
  }
  auto opened = OpenSeal(message);
  if (!opened.ok()) {
    return Reject<FleetEvent>(Rejection::kEventUnparsable,
                              absl::StrCat("not a vin.fleet.v1.FleetEvent (",
                                           opened.status().message(), ")"));
  }
  if (trust_->secret != nullptr) {
    Verdict<bool> signed_ok = CheckSigned(*opened, channel, now);
    if (!signed_ok.value) {
      return Reject<FleetEvent>(signed_ok.rejected, std::move(signed_ok.why));
    }
  } else if (opened->sealed && opened->key != channel) {
    return Reject<FleetEvent>(Rejection::kEventWrongChannel,
                              "sealed for another channel");
  }
  auto event = DecodeEvent(opened->payload);
  if (!event.ok()) {
    return Reject<FleetEvent>(Rejection::kEventUnparsable,
                              std::string(event.status().message()));
  }
  const bool breaker = event->kind == FleetEvent::Kind::kBreakerOpened ||
                       event->kind == FleetEvent::Kind::kBreakerClosed;
  if (!breaker) {
    auto key = ParseFleetKey(event->key);
    if (!key.ok()) {
      return Reject<FleetEvent>(Rejection::kEventUnparsable,
                                std::string(key.status().message()));
    }
    if (event->kind == FleetEvent::Kind::kDone) {
      engine::DecodeResult result;
      for (const auto* bytes : {event->encoded.get(), event->cached.get()}) {
        if (bytes == nullptr) {
          return Reject<FleetEvent>(Rejection::kEventUnparsable, "no result");
        }
        if (!key->reference.empty()) {  // (rule 18: vPIC's document)
          if (engine::IsReferenceDocument(*bytes)) continue;
          return Reject<FleetEvent>(Rejection::kEventUnparsable,
                                    "its result is not vPIC's document");
        }
        if (auto wrong = WrongResult(*trust_, *bytes, key->vin, &result)) {
          return Reject<FleetEvent>(
              wrong->first ? Rejection::kEventWrongVin
                           : Rejection::kEventUnparsable,
              absl::StrCat("its result is ", wrong->second));
        }
        if (result.decode_time - now > kEventMaxSkew) {
          return Reject<FleetEvent>(Rejection::kEventStale,
                                    "its result is decoded later than now");
        }
      }
    }
  }
  ClampEvent(trust_->limits, now, &*event);
  return Accept(*std::move(event));
}

}  // namespace fleet
