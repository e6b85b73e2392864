#include "server/http/api_jobs.h"

#include <google/protobuf/util/json_util.h>

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "server/http/http_status.h"
#include "server/jobs/job_manager.h"
#include "server/jobs/job_mapping.h"

namespace server {
namespace http {
namespace internal {
namespace {

// A job items chunk handed to the upload at a time.
constexpr int kChunk = 1000;

// The HTTP status of a job refusal: the contract's 413 for too many items
// and 409 for a job not ended, else its gRPC code's.
int HttpStatusOfJob(const absl::Status& s) {
  switch (JobReasonOf(s)) {
    case domain::ErrorReason::kJobTooManyItems:
      return 413;
    case domain::ErrorReason::kJobNotEnded:
      return 409;
    default:
      return HttpStatusOf(static_cast<grpc::StatusCode>(s.code()));
  }
}

absl::Status BadQuery(absl::string_view name, absl::string_view why) {
  return JobError(domain::ErrorReason::kInvalidJobSpec,
                  absl::StrCat("query parameter ", name, ": ", why));
}

// An enum value named as in the proto ("SOURCE_PREFERENCE_LIVE_ONLY") or
// by its tail in any case ("live_only").
template <typename Enum, typename Parse>
absl::Status EnumOf(absl::string_view name, const std::string& text,
                    const char* prefix, Parse parse, Enum* out) {
  std::string upper = absl::AsciiStrToUpper(text);
  if (!absl::StartsWith(upper, prefix)) upper = absl::StrCat(prefix, upper);
  if (!parse(upper, out)) return BadQuery(name, "no such value");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<vin::v1::JobSpec> SpecOfQuery(absl::string_view target) {
  vin::v1::JobSpec spec;
  std::string v;
  if (QueryParam(target, "display_name", &v)) spec.set_display_name(v);
  if (QueryParam(target, "notify_url", &v)) spec.set_notify_url(v);
  if (QueryParam(target, "idempotency_key", &v)) spec.set_idempotency_key(v);
  if (QueryParam(target, "schedule", &v)) {
    vin::v1::JobSchedule s;
    if (absl::Status st = EnumOf("schedule", v, "JOB_SCHEDULE_",
                                 vin::v1::JobSchedule_Parse, &s);
        !st.ok()) {
      return st;
    }
    spec.set_schedule(s);
  }
  if (QueryParam(target, "source_preference", &v)) {
    vin::v1::SourcePreference p;
    if (absl::Status st = EnumOf("source_preference", v, "SOURCE_PREFERENCE_",
                                 vin::v1::SourcePreference_Parse, &p);
        !st.ok()) {
      return st;
    }
    spec.set_source_preference(p);
  }
  if (QueryParam(target, "check_digit_policy", &v)) {
    vin::v1::CheckDigitPolicy p;
    if (absl::Status st = EnumOf("check_digit_policy", v, "CHECK_DIGIT_POLICY_",
                                 vin::v1::CheckDigitPolicy_Parse, &p);
        !st.ok()) {
      return st;
    }
    spec.set_check_digit_policy(p);
  }
  if (QueryParam(target, "not_before", &v)) {
    absl::Time t;
    std::string err;
    if (!absl::ParseTime(absl::RFC3339_full, v, &t, &err)) {
      return BadQuery("not_before", "not an RFC 3339 time");
    }
    ToTimestamp(t, spec.mutable_not_before());
  }
  return spec;
}

void ApiJobs::Fail(const absl::Status& status) {
  c_->FailApi(HttpStatusOfJob(status), JobErrorDetails(status));
}

void ApiJobs::SendJson(int status, const google::protobuf::Message& message) {
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(message, &json, {});
  auto res = c_->MakeResponse(status);
  res->set(bhttp::field::content_type, "application/json");
  res->set(bhttp::field::cache_control, "no-store");
  res->body() = std::move(json);
  c_->Send(std::move(res));
}

void ApiJobs::Start() {
  JobManager* jobs = c_->options().jobs;
  if (jobs == nullptr) return Fail(JobsNotConfigured());
  const Route& r = c_->route();
  const std::string& tenant = c_->tenant();
  const absl::string_view target(c_->request().target().data(),
                                 c_->request().target().size());
  switch (r.kind) {
    case Route::Kind::kJobCreate:
      return Create(jobs);
    case Route::Kind::kJobResults:
      return ListResults(jobs);
    case Route::Kind::kJobList: {
      vin::v1::ListJobsRequest req;
      std::string v;
      int size = 0;
      if (QueryParam(target, "page_size", &v) && absl::SimpleAtoi(v, &size)) {
        req.set_page_size(size);
      }
      if (QueryParam(target, "page_token", &v)) req.set_page_token(v);
      auto out = jobs->List(tenant, req);
      return out.ok() ? SendJson(200, *out) : Fail(out.status());
    }
    case Route::Kind::kJobGet: {
      auto out = jobs->Get(tenant, r.job_id);
      return out.ok() ? SendJson(200, *out) : Fail(out.status());
    }
    case Route::Kind::kJobCancel: {
      auto out = jobs->Cancel(tenant, r.job_id);
      return out.ok() ? SendJson(200, *out) : Fail(out.status());
    }
    case Route::Kind::kJobDelete: {
      absl::Status s = jobs->Delete(tenant, r.job_id);
      return s.ok() ? SendJson(200, vin::v1::DeleteJobResponse()) : Fail(s);
    }
    default:
      return Fail(absl::InternalError("no job handler"));
  }
}

void ApiJobs::Create(JobManager* jobs) {
  const absl::string_view target(c_->request().target().data(),
                                 c_->request().target().size());
  absl::StatusOr<vin::v1::JobSpec> spec = SpecOfQuery(target);
  if (!spec.ok()) return Fail(spec.status());
  std::unique_ptr<JobManager::Upload> upload = jobs->NewUpload(c_->tenant());
  if (absl::Status s = upload->Spec(*spec); !s.ok()) return Fail(s);
  vin::v1::JobItems chunk;
  size_t line_no = 0;
  for (absl::string_view line : absl::StrSplit(c_->request().body(), '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    vin::v1::DecodeBatchRequest* item = chunk.add_items();
    const auto st = google::protobuf::util::JsonStringToMessage(
        std::string(line), item, ApiJsonOptions());
    if (!st.ok()) {
      return Fail(
          JobError(domain::ErrorReason::kMalformedRequest,
                   absl::StrCat("line ", line_no,
                                " is not a vin.v1.DecodeBatchRequest in JSON: ",
                                std::string(st.message()))));
    }
    if (chunk.items_size() == kChunk) {
      if (absl::Status s = upload->Items(chunk); !s.ok()) return Fail(s);
      chunk.clear_items();
    }
  }
  if (chunk.items_size() > 0) {
    if (absl::Status s = upload->Items(chunk); !s.ok()) return Fail(s);
  }
  absl::StatusOr<vin::v1::Job> job = upload->Finish();
  if (!job.ok()) return Fail(job.status());
  SendJson(200, *job);
}

void ApiJobs::ListResults(JobManager* jobs) {
  const absl::string_view target(c_->request().target().data(),
                                 c_->request().target().size());
  vin::v1::ListJobResultsRequest req;
  req.set_job_id(c_->route().job_id);
  std::string v;
  int size = 0;
  if (QueryParam(target, "page_size", &v)) {
    if (!absl::SimpleAtoi(v, &size) || size < 0) {
      return Fail(BadQuery("page_size", "not a count"));
    }
    req.set_page_size(size);
  }
  if (QueryParam(target, "page_token", &v)) req.set_page_token(v);
  if (QueryParam(target, "format", &v) &&
      !absl::EqualsIgnoreCase(v, "ndjson")) {
    return Fail(BadQuery("format", "this server lists results as ndjson"));
  }
  absl::StatusOr<vin::v1::ListJobResultsResponse> page =
      jobs->Results(c_->tenant(), req);
  if (!page.ok()) return Fail(page.status());
  std::string body;
  for (const vin::v1::JobResult& r : page->results()) {
    std::string line;
    (void)google::protobuf::util::MessageToJsonString(r, &line, {});
    absl::StrAppend(&body, line, "\n");
  }
  // The page's end (a token is URL-safe base64: nothing to escape).
  absl::StrAppend(&body, "{\"nextPageToken\":\"", page->next_page_token(),
                  "\",\"complete\":", page->complete() ? "true" : "false",
                  "}\n");
  auto res = c_->MakeResponse(200);
  res->set(bhttp::field::content_type, "application/x-ndjson");
  res->set(bhttp::field::cache_control, "no-store");
  res->set("X-Next-Page-Token", page->next_page_token());
  res->set("X-Results-Complete", page->complete() ? "true" : "false");
  res->body() = std::move(body);
  c_->Send(std::move(res));
}

}  // namespace internal
}  // namespace http
}  // namespace server
