// Session's answers (session.h): vPIC's paths in vPIC's shape (each
// DecodeVinValues answer of a cached result rendered once, Gateway::Impl
// keeps it), with the ETag (304 on If-None-Match), the provenance headers
// and Cache-Control; our /v1/decode as a DecodeResponse or a
// google.rpc.Status; the gateway's own errors.
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "google/rpc/status.pb.h"
#include "server/common/proto_mapping.h"
#include "server/common/status_mapping.h"
#include "server/http/http_status.h"
#include "server/http/session.h"
#include "server/http/vpic_shape.h"
#include "vin/v1/vin.pb.h"

namespace server {
namespace http {
namespace internal {
namespace {

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

}  // namespace

void Session::RespondVpic() {
  if (mode_ == Mode::kValues && outcomes_[0].done) {
    return RespondValues(outcomes_[0].answer);
  }
  std::vector<vin::v1::DecodeResult> results;
  for (size_t i = 0; i < outcomes_.size(); ++i) {
    Outcome& o = outcomes_[i];
    if (!o.done) {
      return FailVpic(o.failure,
                      outcomes_.size() > 1
                          ? absl::StrCat("VIN ", i + 1, ": ", o.failure.message)
                          : o.failure.message);
    }
    results.emplace_back();
    ToProto(*o.answer, &results.back());
  }
  std::string body, etag;
  if (mode_ == Mode::kValues) {
    body = VpicValuesAnswer(results[0], route_.vin);
  } else if (mode_ == Mode::kVariables) {
    body = VpicVariablesAnswer(results[0], route_.vin);
  } else {
    body = VpicBatchAnswer(results);
  }
  etag = ETagOf(body);
  SendVpic(results, body, etag);
}

void Session::FailVpic(const engine::Failure& f, absl::string_view message) {
  const int status = HttpStatusOf(f.reason);
  auto res = MakeResponse(status);
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
  Send(std::move(res));
}

void Session::RespondValues(
    const std::shared_ptr<const engine::DecodeResult>& answer) {
  std::shared_ptr<const Rendered> r = gateway_->FindRendered(*answer, route_.vin);
  if (r == nullptr) {
    auto fresh = std::make_shared<Rendered>();
    fresh->encoded = answer->encoded;
    fresh->searched = route_.vin;
    ToProto(*answer, &fresh->result);
    fresh->body = VpicValuesAnswer(fresh->result, route_.vin);
    fresh->etag = ETagOf(fresh->body);
    if (answer->source == engine::Source::kCache) gateway_->KeepRendered(fresh);
    r = std::move(fresh);
  }
  SendVpic({r->result}, r->body, r->etag);
}

void Session::SendVpic(const std::vector<vin::v1::DecodeResult>& results,
                       const std::string& body, const std::string& etag) {
  auto res = MakeResponse(200);
  res->set(bhttp::field::content_type, "application/json; charset=utf-8");
  Provenance(results, res.get());
  SendTagged(std::move(res), body, etag);
}

void Session::SendTagged(std::shared_ptr<Response> res, const std::string& body,
                         const std::string& etag) {
  res->set(bhttp::field::etag, etag);
  if (auto inm = request_.find(bhttp::field::if_none_match);
      inm != request_.end() && Matches(std::string(inm->value()), etag)) {
    res->result(bhttp::status::not_modified);
    return Send(std::move(res));
  }
  res->body() = body;
  Send(std::move(res));
}

void Session::SendFile(const char* content, const char* type,
                       const std::string& etag) {
  auto res = MakeResponse(200);
  res->set(bhttp::field::content_type, type);
  res->set(bhttp::field::cache_control, "no-cache");
  SendTagged(std::move(res), content, etag);
}

bool Session::Matches(const std::string& header, const std::string& etag) {
  for (absl::string_view tag : absl::StrSplit(header, ',')) {
    tag = absl::StripAsciiWhitespace(tag);
    if (tag == "*" || tag == etag || tag == absl::StrCat("W/", etag)) return true;
  }
  return false;
}

void Session::Provenance(const std::vector<vin::v1::DecodeResult>& results,
                         Response* res) const {
  std::vector<std::string> sources;
  bool stale = false, snapshot = false;
  absl::Time oldest = absl::InfiniteFuture();
  for (const auto& r : results) {
    sources.push_back(SourceName(r.source()));
    snapshot |= r.source() == vin::v1::SOURCE_SNAPSHOT;
    oldest = std::min(oldest, absl::FromUnixSeconds(r.decode_time().seconds()) +
                                  absl::Nanoseconds(r.decode_time().nanos()));
    for (const auto& n : r.notes()) {
      stale |= n.code() == "stale";
      res->insert("X-Vin-Note", HeaderSafe(absl::StrCat(n.code(), ": ", n.message())));
    }
  }
  res->set("X-Vin-Source", absl::StrJoin(sources, ","));
  if (stale) res->set("X-Vin-Stale", "true");
  if (stale || snapshot) {
    res->set(bhttp::field::cache_control, "no-cache");
  } else {
    const absl::Duration left = options().cache_ttl - (absl::Now() - oldest);
    res->set(bhttp::field::cache_control,
             absl::StrCat("max-age=",
                          std::max<int64_t>(0, absl::ToInt64Seconds(left))));
  }
}

void Session::RespondDecode() {
  Outcome& o = outcomes_[0];
  if (!o.done) {
    return FailApi(HttpStatusOf(o.failure.reason),
                   DetailsOf(o.failure, route_.vin));
  }
  vin::v1::DecodeResponse out;
  ToProto(*o.answer, out.mutable_result());
  std::string json;
  google::protobuf::util::JsonPrintOptions opts;
  (void)google::protobuf::util::MessageToJsonString(out, &json, opts);
  auto res = MakeResponse(200);
  res->set(bhttp::field::content_type, "application/json");
  res->set(bhttp::field::cache_control, "no-store");
  res->body() = std::move(json);
  Send(std::move(res));
}

void Session::FailApi(int status, const ErrorDetails& details, bool close) {
  if (close) keep_alive_ = false;
  auto res = MakeResponse(status);
  res->set(bhttp::field::content_type, "application/json");
  res->set(bhttp::field::cache_control, "no-store");
  if (status == 503 || status == 429) {
    res->set(bhttp::field::retry_after, RetryAfterOf(details.retry_delay));
  }
  res->body() = RpcStatusJson(ToRpcStatus(details));
  Send(std::move(res));
}

void Session::Fail(int status, domain::ErrorReason reason,
                   absl::string_view message, bool close) {
  if (api_) {
    return FailApi(
        status, DetailsOf(GrpcCodeOfHttp(status), reason, std::string(message)),
        close);
  }
  if (close) keep_alive_ = false;
  auto res = MakeResponse(status);
  res->set(bhttp::field::content_type, "application/json; charset=utf-8");
  res->set(bhttp::field::cache_control, "no-store");
  res->body() = ErrorBody(status, reason, message);
  Send(std::move(res));
}

}  // namespace internal
}  // namespace http
}  // namespace server
