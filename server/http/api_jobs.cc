#include "server/http/api_jobs.h"

#include <google/protobuf/util/json_util.h>

#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "feed/csv.h"
#include "feed/feed.h"
#include "feed/result_writer.h"
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
  const auto type = c_->request().find(bhttp::field::content_type);
  const bool csv =
      type != c_->request().end() &&
      absl::StartsWithIgnoreCase(
          absl::string_view(type->value().data(), type->value().size()),
          "text/csv");
  absl::Status read = csv ? ReadCsv(upload.get()) : ReadNdjson(upload.get());
  if (!read.ok()) return Fail(read);
  absl::StatusOr<vin::v1::Job> job = upload->Finish();
  if (!job.ok()) return Fail(job.status());
  SendJson(200, *job);
}

// One DecodeBatchRequest in JSON a line.
absl::Status ApiJobs::ReadNdjson(JobManager::Upload* upload) {
  vin::v1::JobItems chunk;
  size_t line_no = 0;
  for (absl::string_view line : absl::StrSplit(c_->request().body(), '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    const auto st = google::protobuf::util::JsonStringToMessage(
        std::string(line), chunk.add_items(), ApiJsonOptions());
    if (!st.ok()) {
      return JobError(domain::ErrorReason::kMalformedRequest,
                      absl::StrCat("line ", line_no,
                                   " is not a vin.v1.DecodeBatchRequest in "
                                   "JSON: ",
                                   std::string(st.message())));
    }
    if (chunk.items_size() == kChunk) {
      if (absl::Status s = upload->Items(chunk); !s.ok()) return s;
      chunk.clear_items();
    }
  }
  return chunk.items_size() > 0 ? upload->Items(chunk) : absl::OkStatus();
}

// A feed as vinctl reads it (a CSV with a VIN column, or a list of VINs):
// each record an item, its row kept beside it (RowExtra) so that the CSV
// results are the posted file with the result columns after its own.
absl::Status ApiJobs::ReadCsv(JobManager::Upload* upload) {
  std::istringstream in(c_->request().body());
  auto malformed = [](const absl::Status& s) {
    return JobError(domain::ErrorReason::kMalformedRequest,
                    absl::StrCat("the CSV body: ", s.message()));
  };
  auto reader = feed::FeedReader::Open(&in);
  if (!reader.ok()) return malformed(reader.status());
  if (absl::Status s =
          upload->Columns(feed::FormatCsvRecord((*reader)->columns()));
      !s.ok()) {
    return s;
  }
  vin::v1::JobItems chunk;
  std::vector<std::string> extras;
  while (true) {
    auto next = (*reader)->Next();
    if (!next.ok()) return malformed(next.status());
    if (next->has_value()) {
      feed::FeedRecord& r = **next;
      vin::v1::DecodeBatchRequest* item = chunk.add_items();
      item->set_request_id(absl::StrCat(r.index));
      // A row vinctl would not send keeps its place, failed BAD_ROW.
      if (r.problem.empty()) item->set_vin(r.vin);
      extras.push_back(RowExtra(r.problem, r.fields));
    }
    if (chunk.items_size() == kChunk ||
        (!next->has_value() && chunk.items_size() > 0)) {
      if (absl::Status s = upload->Items(chunk, extras); !s.ok()) return s;
      chunk.clear_items();
      extras.clear();
    }
    if (!next->has_value()) return absl::OkStatus();
  }
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
  bool csv = false;
  if (QueryParam(target, "format", &v)) {
    csv = absl::EqualsIgnoreCase(v, "csv");
    if (!csv && !absl::EqualsIgnoreCase(v, "ndjson")) {
      return Fail(BadQuery("format", "ndjson (the default) or csv"));
    }
  }
  JobManager::Rows rows;
  absl::StatusOr<vin::v1::ListJobResultsResponse> page =
      jobs->Results(c_->tenant(), req, &rows);
  if (!page.ok()) return Fail(page.status());
  if (csv) return SendCsv(*page, rows);
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

void ApiJobs::SendCsv(const vin::v1::ListJobResultsResponse& page,
                      const JobManager::Rows& rows) {
  std::vector<std::string> columns = {"vin"};
  if (!rows.columns.empty()) {
    auto parsed = feed::ParseCsvRecord(rows.columns);
    if (parsed.ok()) columns = *std::move(parsed);
  }
  std::ostringstream body;
  feed::ResultWriter writer(feed::OutputFormat::kCsv, columns, &body);
  (void)writer.WriteHeader();  // on every page
  for (int i = 0; i < page.results_size(); ++i) {
    const vin::v1::JobResult& r = page.results(i);
    std::string problem;
    std::vector<std::string> fields = {r.vin()};
    if (static_cast<size_t>(i) < rows.extras.size() &&
        !rows.extras[i].empty()) {
      auto row = feed::ParseCsvRecord(rows.extras[i]);
      if (row.ok() && !row->empty()) {
        problem = row->front();
        fields.assign(row->begin() + 1, row->end());
      }
    }
    const feed::Outcome outcome =
        !problem.empty() ? feed::Outcome::ClientFailure("BAD_ROW", problem)
        : r.has_result() ? feed::Outcome::Done(r.result())
                         : feed::Outcome::Failed(r.failure());
    (void)writer.Write(r.index(), fields, outcome);
  }
  (void)writer.Flush();
  auto res = c_->MakeResponse(200);
  res->set(bhttp::field::content_type, "text/csv; charset=utf-8");
  res->set(bhttp::field::cache_control, "no-store");
  res->set("X-Next-Page-Token", page.next_page_token());
  res->set("X-Results-Complete", page.complete() ? "true" : "false");
  res->body() = body.str();
  c_->Send(std::move(res));
}

std::string RowExtra(const std::string& problem,
                     const std::vector<std::string>& fields) {
  std::vector<std::string> row;
  row.reserve(fields.size() + 1);
  row.push_back(problem);
  row.insert(row.end(), fields.begin(), fields.end());
  return feed::FormatCsvRecord(row);
}

}  // namespace internal
}  // namespace http
}  // namespace server
