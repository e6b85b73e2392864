// vPIC's decode paths (vpic_decode.h): the engine requests of each path
// (a single VIN is interactive, the batch form bulk), and the answers in
// vPIC's shape with where they came from in headers (never in vPIC's
// fields) and how long browsers and proxies may keep them.
#include "server/http/vpic_decode.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "engine/invalid_reason.h"
#include "server/common/proto_mapping.h"
#include "server/http/http_status.h"
#include "server/http/vpic_shape.h"
#include "util/utf8.h"
#include "vin/vin.h"

namespace server {
namespace http {
namespace internal {
namespace {

constexpr size_t kMaxBatchVins = 50;  // vPIC's limit

const char* SourceName(vin::v1::Source s) {
  switch (s) {
    case vin::v1::SOURCE_VPIC:
      return "vpic";
    case vin::v1::SOURCE_CACHE:
      return "cache";
    case vin::v1::SOURCE_SNAPSHOT:
      return "snapshot";
    default:
      return "unknown";
  }
}

void SetProvenance(const std::vector<vin::v1::DecodeResult>& results,
                   absl::Duration cache_ttl, Response* res) {
  Provenance p;
  for (const auto& r : results) {
    p.Add(SourceName(r.source()), r.source() == vin::v1::SOURCE_SNAPSHOT,
          absl::FromUnixSeconds(r.decode_time().seconds()) +
              absl::Nanoseconds(r.decode_time().nanos()));
    for (const auto& n : r.notes()) p.Note(n.code(), n.message());
  }
  p.Set(cache_ttl, res);
}

}  // namespace

void Provenance::Add(const char* source, bool from_snapshot,
                     absl::Time decode_time) {
  sources.push_back(source);
  snapshot |= from_snapshot;
  oldest = std::min(oldest, decode_time);
}

void Provenance::Note(absl::string_view code, absl::string_view message) {
  stale |= code == "stale";
  notes.push_back(HeaderSafe(absl::StrCat(code, ": ", message)));
}

void Provenance::Add(const engine::DecodeResult& r) {
  Add(r.source == engine::Source::kVpic    ? "vpic"
      : r.source == engine::Source::kCache ? "cache"
                                           : "snapshot",
      r.source == engine::Source::kSnapshot, r.decode_time);
  for (const auto& n : r.notes) Note(n.code, n.message);
}

// Where the answer came from (X-Vin-Source, X-Vin-Stale, X-Vin-Note), and
// how long it may be kept: a live answer until its cache entry expires,
// a stale or snapshot one revalidated each time.
void Provenance::Set(absl::Duration ttl, Response* res) const {
  for (const std::string& n : notes) res->insert("X-Vin-Note", n);
  res->set("X-Vin-Source", absl::StrJoin(sources, ","));
  if (stale) res->set("X-Vin-Stale", "true");
  if (stale || snapshot) {
    res->set(bhttp::field::cache_control, "no-cache");
  } else {
    const absl::Duration left = ttl - (absl::Now() - oldest);
    res->set(bhttp::field::cache_control,
             absl::StrCat("max-age=",
                          std::max<int64_t>(0, absl::ToInt64Seconds(left))));
  }
}

void VpicDecode::Start() {
  const Route& route = c_->route();
  format_ = route.format;
  auto preference = SourcePreferenceHeader(c_->request());
  if (!preference.ok()) {
    return c_->Fail(400, domain::ErrorReason::kMalformedRequest,
                    preference.status().message(), false);
  }
  preference_ = *preference;
  if (route.kind == Route::Kind::kVpicBatch) return StartBatch();
  engine::DecodeRequest r;
  r.source_preference = preference_;
  r.vin = route.vin;
  r.model_year = route.model_year;
  r.allow_partial = true;  // vPIC decodes partial VINs
  r.timeout = c_->timeout();
  r.tenant = c_->tenant();
  asked_ = {{r.vin, r.model_year}};
  Submit({r});
}

void VpicDecode::StartBatch() {
  const Request& request = c_->request();
  auto form = ParseBatchForm(request.body(), kMaxBatchVins);
  if (!form.ok()) {
    return c_->Fail(400, domain::ErrorReason::kMalformedRequest,
                    form.status().message(), false);
  }
  // As vPIC: the form's format, or XML (the query's is not read).
  format_ = form->has_format ? form->format : VpicFormat::kXml;
  std::vector<engine::DecodeRequest> requests;
  for (size_t i = 0; i < form->entries.size(); ++i) {
    const BatchEntry& e = form->entries[i];
    // An invalid VIN the snapshot cannot answer as vPIC does refuses the
    // whole batch before any is sent (rule 21 answers the others in place).
    auto valid = vin::ValidatePartial(e.vin, vin::CheckDigitPolicy::kEnforce);
    if (!valid.ok() &&
        !c_->gateway()->engine()->CanAnswerInvalidVin(e.vin, preference_)) {
      return Fail(domain::FailureOf(engine::FailureReason::kInvalidVin, "",
                                    engine::InvalidReasonOf(valid.status())),
                  absl::StrCat("VIN ", i + 1, " (", util::SafeText(e.vin, 64),
                               "): ", valid.status().message()));
    }
    asked_.emplace_back(e.vin, e.model_year);
    engine::DecodeRequest r;
    r.source_preference = preference_;
    r.vin = e.vin;
    r.model_year = e.model_year;
    r.allow_partial = true;
    r.timeout = c_->timeout();
    r.priority = domain::Priority::kBulk;
    r.tenant = c_->tenant();
    requests.push_back(std::move(r));
  }
  Submit(std::move(requests));
}

void VpicDecode::AnswerInvalidVins(std::vector<Outcome>& outcomes) {
  for (size_t i = 0; i < outcomes.size() && i < asked_.size(); ++i) {
    Outcome& o = outcomes[i];
    if (o.done || o.failure.reason != engine::FailureReason::kInvalidVin) {
      continue;
    }
    if (auto answer = c_->gateway()->engine()->InvalidVinAnswer(
            asked_[i].first, asked_[i].second, preference_,
            o.failure.suggested_vins)) {
      o.done = true;
      o.answer = std::move(answer);
    }
  }
}

void VpicDecode::Answer(std::vector<Outcome>& outcomes) {
  const Route& route = c_->route();
  AnswerInvalidVins(outcomes);
  if (route.kind == Route::Kind::kVpicValues && outcomes[0].done) {
    return AnswerValues(outcomes[0].answer);
  }
  std::vector<vin::v1::DecodeResult> results;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const Outcome& o = outcomes[i];
    if (!o.done) {
      return Fail(o.failure,
                  outcomes.size() > 1
                      ? absl::StrCat("VIN ", i + 1, ": ", o.failure.message)
                      : o.failure.message);
    }
    results.emplace_back();
    ToProto(*o.answer, &results.back());
  }
  std::string body = Render(route.kind == Route::Kind::kVpicVariables
                                ? VpicVariablesAnswer(results[0], route.vin)
                                : VpicBatchAnswer(results),
                            format_);
  const std::string etag = ETagOf(body);
  Send(results, std::make_shared<const std::string>(std::move(body)), etag);
}

void SendVpicFailure(Connection* c, const engine::Failure& f,
                     absl::string_view message) {
  const int status = HttpStatusOf(f.reason);
  auto res = c->MakeResponse(status);
  res->set(bhttp::field::content_type, "application/json; charset=utf-8");
  res->set(bhttp::field::cache_control, "no-store");
  // When to come back (at least a second, also when the engine suggests
  // no delay).
  if (status == 503 || status == 429) {
    res->set(bhttp::field::retry_after, RetryAfterOf(f.retry_delay));
  }
  res->body() =
      ErrorBody(status, absl::AsciiStrToUpper(domain::TraitsOf(f.reason).label),
                domain::ReasonOf(f), message, f.retryable, f.retry_delay);
  c->Send(std::move(res));
}

absl::StatusOr<engine::SourcePreference> SourcePreferenceHeader(
    const Request& request) {
  auto it = request.find("X-Vin-Source-Preference");
  if (it == request.end()) return engine::SourcePreference::kUnspecified;
  const absl::string_view v = absl::StripAsciiWhitespace(
      absl::string_view(it->value().data(), it->value().size()));
  if (absl::EqualsIgnoreCase(v, "live_only")) {
    return engine::SourcePreference::kLiveOnly;
  }
  if (absl::EqualsIgnoreCase(v, "snapshot_only")) {
    return engine::SourcePreference::kSnapshotOnly;
  }
  if (absl::EqualsIgnoreCase(v, "live_then_snapshot")) {
    return engine::SourcePreference::kLiveThenSnapshot;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "X-Vin-Source-Preference \"", HeaderSafe(v.substr(0, 64)),
      "\" is not one of live_only, snapshot_only, live_then_snapshot"));
}

void VpicDecode::AnswerValues(
    const std::shared_ptr<const engine::DecodeResult>& answer) {
  const std::string& searched = c_->route().vin;
  Gateway::Impl* gateway = c_->gateway();
  std::shared_ptr<const Rendered> r =
      gateway->FindRendered(*answer, searched, format_);
  if (r == nullptr) {
    auto fresh = std::make_shared<Rendered>();
    fresh->encoded = answer->encoded;
    fresh->searched = searched;
    fresh->format = format_;
    ToProto(*answer, &fresh->result);
    fresh->body = Render(VpicValuesAnswer(fresh->result, searched), format_);
    fresh->etag = ETagOf(fresh->body);
    if (answer->source == engine::Source::kCache) gateway->KeepRendered(fresh);
    r = std::move(fresh);
  }
  // (The body shared with the kept rendering: no copy per response.)
  Send({r->result}, std::shared_ptr<const std::string>(r, &r->body), r->etag);
}

void VpicDecode::Send(const std::vector<vin::v1::DecodeResult>& results,
                      std::shared_ptr<const std::string> body,
                      const std::string& etag) {
  auto res = c_->MakeResponse(200);
  res->set(bhttp::field::content_type, ContentTypeOf(format_));
  SetProvenance(results, c_->options().cache_ttl, res.get());
  c_->SendTagged(std::move(res), std::move(body), etag);
}

}  // namespace internal
}  // namespace http
}  // namespace server
