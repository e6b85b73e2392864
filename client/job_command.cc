#include "client/job_command.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/batch.h"
#include "feed/feed.h"

namespace vinctl {
namespace {

using vin::v1::Job;

constexpr int kChunk = 1000;  // items per CreateJob message
constexpr int kPage = 1000;   // results per ListJobResults page
// Watches in a row that may end without the job moving (about 20 s of
// pauses).
constexpr int kMaxLostWatches = 20;

void Prepare(grpc::ClientContext* ctx, const JobOptions& o) {
  if (!o.tenant.empty()) ctx->AddMetadata("x-vin-tenant", o.tenant);
}

int CallFailed(const grpc::Status& s, std::ostream& err) {
  err << "vinctl: " << s.error_code() << ": " << s.error_message() << std::endl;
  return kExitError;
}

std::string StateName(vin::v1::JobState s) {
  absl::string_view name = vin::v1::JobState_Name(s);
  absl::ConsumePrefix(&name, "JOB_STATE_");
  return absl::AsciiStrToLower(name);
}

bool Ended(const Job& j) { return j.state() >= vin::v1::JOB_STATE_SUCCEEDED; }

// The feed, from a file or stdin.
class Input {
 public:
  // The feed's reader, or null after saying why on `err`.
  std::unique_ptr<feed::FeedReader> OpenFeed(const std::string& path,
                                             std::ostream& err) {
    if (path != "-") {
      file_.open(path, std::ios::binary);
      if (!file_) {
        err << "vinctl: cannot read " << path << std::endl;
        return nullptr;
      }
    }
    auto feed = feed::FeedReader::Open(file_.is_open() ? &file_ : &std::cin);
    if (!feed.ok()) {
      err << "vinctl: " << feed.status().message() << std::endl;
      return nullptr;
    }
    return *std::move(feed);
  }

 private:
  std::ifstream file_;
};

int Submit(const JobOptions& o, vin::v1::VinJobService::StubInterface* stub,
           std::ostream& out, std::ostream& err) {
  Input input;
  std::unique_ptr<feed::FeedReader> feed = input.OpenFeed(o.in, err);
  if (feed == nullptr) return kExitError;
  vin::v1::CreateJobRequest spec;
  vin::v1::JobSpec* s = spec.mutable_spec();
  s->set_display_name(o.name.empty() ? o.in : o.name);
  s->set_schedule(o.off_peak ? vin::v1::JOB_SCHEDULE_OFF_PEAK
                             : vin::v1::JOB_SCHEDULE_NOW);
  if (!o.not_before.empty()) {
    absl::Time t;
    std::string why;
    if (!absl::ParseTime(absl::RFC3339_full, o.not_before, &t, &why)) {
      err << "vinctl: --not-before: '" << o.not_before
          << "' is not an RFC 3339 time (2026-12-06T22:00:00Z)" << std::endl;
      return kExitError;
    }
    s->mutable_not_before()->set_seconds(absl::ToUnixSeconds(t));
  }
  s->set_idempotency_key(o.idempotency_key);
  s->set_notify_url(o.notify_url);
  if (o.warn_check_digit) {
    s->set_check_digit_policy(vin::v1::CHECK_DIGIT_POLICY_WARN);
  }
  grpc::ClientContext ctx;
  Prepare(&ctx, o);
  Job job;
  auto writer = stub->CreateJob(&ctx, &job);
  bool open = writer->Write(spec);
  vin::v1::CreateJobRequest part;
  while (open) {
    auto next = feed->Next();
    if (!next.ok()) {
      ctx.TryCancel();  // nothing is stored of a job not finished
      writer->Finish();
      err << "vinctl: " << next.status().message() << std::endl;
      return kExitError;
    }
    if (next->has_value()) {
      // A row that cannot be sent keeps its place (fetch fails it as
      // batch does, BAD_ROW), so indexes stay the input's.
      vin::v1::DecodeBatchRequest* item = part.mutable_items()->add_items();
      item->set_request_id(absl::StrCat((*next)->index));
      if ((*next)->problem.empty()) item->set_vin((*next)->vin);
      item->set_model_year(o.model_year);
    }
    if (part.items().items_size() == kChunk ||
        (!next->has_value() && part.items().items_size() > 0)) {
      open = writer->Write(part);
      part.Clear();
    }
    if (!next->has_value()) break;
  }
  writer->WritesDone();
  const grpc::Status status = writer->Finish();
  if (!status.ok()) return CallFailed(status, err);
  out << job.job_id() << std::endl;
  return kExitOk;
}

// Where a fetch to `out` stands: the next page's token and the records
// written (kept in `<out>.fetch` after each page).
struct FetchState {
  std::string token;
  int64_t written = 0;
  int64_t bytes = 0;   // of the output then: more was not accounted for
  int64_t failed = 0;  // records written failed
};

absl::optional<FetchState> ReadState(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::nullopt;
  FetchState s;
  std::string count, bytes, failed;
  if (!std::getline(in, s.token) || !std::getline(in, count) ||
      !std::getline(in, bytes) || !std::getline(in, failed) ||
      !absl::SimpleAtoi(count, &s.written) ||
      !absl::SimpleAtoi(bytes, &s.bytes) ||
      !absl::SimpleAtoi(failed, &s.failed)) {
    return absl::nullopt;
  }
  return s;
}

bool WriteState(const std::string& path, const FetchState& s) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << s.token << "\n"
        << s.written << "\n"
        << s.bytes << "\n"
        << s.failed << "\n";
    if (!out.flush()) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

// Waits until job `id` has moved (WatchJob's next Job after the first).
// Waits until job `id` has moved (WatchJob's next Job after the first, or
// one that has ended). A watch that ends otherwise (the server restarting,
// a proxy's idle timeout) is no answer: the status says why.
grpc::Status AwaitChange(const JobOptions& o,
                         vin::v1::VinJobService::StubInterface* stub) {
  grpc::ClientContext ctx;
  Prepare(&ctx, o);
  vin::v1::GetJobRequest r;
  r.set_job_id(o.id);
  auto reader = stub->WatchJob(&ctx, r);
  Job job;
  int seen = 0;
  while (reader->Read(&job)) {
    if (++seen == 2 || Ended(job)) {
      ctx.TryCancel();
      reader->Finish();
      return grpc::Status::OK;
    }
  }
  const grpc::Status s = reader->Finish();
  return s.ok() ? grpc::Status(grpc::StatusCode::UNAVAILABLE,
                               "the watch ended without the job moving")
                : s;
}

int Fetch(const JobOptions& o, vin::v1::VinJobService::StubInterface* stub,
          std::ostream& out, std::ostream& err) {
  Input input;
  std::unique_ptr<feed::FeedReader> feed = input.OpenFeed(o.in, err);
  if (feed == nullptr) return kExitError;
  const std::string state_path = o.out == "-" ? "" : o.out + ".fetch";
  FetchState state;
  if (!state_path.empty()) {
    if (auto kept = ReadState(state_path)) state = *kept;
  }
  std::ofstream file;
  std::ostream* sink = &out;
  if (o.out != "-") {
    // Rows written after the last page accounted for (a fetch killed
    // between the two) are cut off: they come again.
    std::error_code ec;
    if (state.written > 0) std::filesystem::resize_file(o.out, state.bytes, ec);
    if (ec) state = FetchState();
    file.open(o.out, std::ios::binary |
                         (state.written > 0 ? std::ios::app : std::ios::trunc));
    if (!file) {
      err << "vinctl: cannot write " << o.out << std::endl;
      return kExitError;
    }
    sink = &file;
  }
  feed::ResultWriter writer(o.format, feed->columns(), sink);
  if (state.written == 0 && !writer.WriteHeader().ok()) return kExitError;
  int64_t record = 0;  // records of the input read
  auto next_record = [&]() -> absl::StatusOr<absl::optional<feed::FeedRecord>> {
    ++record;
    return feed->Next();
  };
  for (; record < state.written;) {  // written before: skip them
    auto r = next_record();
    if (!r.ok() || !r->has_value()) break;
  }
  int lost = 0;  // watches in a row that ended without the job moving
  while (true) {
    grpc::ClientContext ctx;
    Prepare(&ctx, o);
    vin::v1::ListJobResultsRequest req;
    req.set_job_id(o.id);
    req.set_page_size(kPage);
    req.set_page_token(state.token);
    vin::v1::ListJobResultsResponse page;
    const grpc::Status s = stub->ListJobResults(&ctx, req, &page);
    if (!s.ok()) return CallFailed(s, err);
    for (const vin::v1::JobResult& r : page.results()) {
      auto rec = next_record();
      if (!rec.ok() || !rec->has_value() || (*rec)->index != r.index()) {
        err << "vinctl: the job's item " << r.index() << " has no record in "
            << o.in << " (is it the feed the job was submitted from?)"
            << std::endl;
        return kExitError;
      }
      feed::Outcome outcome =
          !(*rec)->problem.empty()
              ? feed::Outcome::ClientFailure("BAD_ROW", (*rec)->problem)
          : r.has_result() ? feed::Outcome::Done(r.result())
                           : feed::Outcome::Failed(r.failure());
      state.failed += outcome.done ? 0 : 1;
      if (!writer.Write(r.index(), (*rec)->fields, outcome).ok()) {
        return kExitError;
      }
    }
    if (!writer.Flush().ok()) return kExitError;
    state.written += page.results_size();
    if (file.is_open()) {
      std::error_code ec;
      const auto size = std::filesystem::file_size(o.out, ec);
      if (!ec) state.bytes = static_cast<int64_t>(size);
    }
    if (!page.next_page_token().empty()) state.token = page.next_page_token();
    if (!state_path.empty() && !WriteState(state_path, state)) {
      err << "vinctl: cannot write " << state_path << std::endl;
      return kExitError;
    }
    if (page.complete()) break;
    if (page.results_size() > 0) {
      lost = 0;
      continue;
    }
    // Nothing new: wait for the job to move. A watch that ends without it
    // is tried again after a growing pause (the next page says whether the
    // job is still there); after about 20 s of that, the fetch gives up.
    const grpc::Status watched = AwaitChange(o, stub);
    if (watched.ok()) {
      lost = 0;
      continue;
    }
    if (++lost > kMaxLostWatches) {
      err << "vinctl: lost the job while waiting for its results ("
          << watched.error_message() << "); run the same fetch again to "
          << "resume" << std::endl;
      return kExitError;
    }
    absl::SleepFor(std::min(absl::Seconds(4), absl::Milliseconds(100) * lost));
  }
  if (!state_path.empty()) std::remove(state_path.c_str());
  return state.failed > 0 ? kExitItemsFailed : kExitOk;
}

}  // namespace

std::string JobLine(const Job& j) {
  std::string line = absl::StrCat(j.job_id(), " ", StateName(j.state()), " ",
                                  j.items_done(), "/", j.items_total(),
                                  " done, ", j.items_failed(), " failed");
  if (j.held_for_off_peak()) absl::StrAppend(&line, ", held for off-peak");
  if (j.has_estimated_start()) {
    absl::StrAppend(
        &line, " until ",
        absl::FormatTime(absl::RFC3339_sec,
                         absl::FromUnixSeconds(j.estimated_start().seconds()),
                         absl::UTCTimeZone()));
  }
  if (!j.spec().display_name().empty()) {
    absl::StrAppend(&line, " (", j.spec().display_name(), ")");
  }
  if (!j.message().empty()) absl::StrAppend(&line, ": ", j.message());
  return line;
}

int RunJob(const JobOptions& o, vin::v1::VinJobService::StubInterface* stub,
           std::ostream& out, std::ostream& err) {
  switch (o.op) {
    case JobOp::kSubmit:
      return Submit(o, stub, out, err);
    case JobOp::kFetch:
      return Fetch(o, stub, out, err);
    case JobOp::kList: {
      std::string token;
      do {
        grpc::ClientContext ctx;
        Prepare(&ctx, o);
        vin::v1::ListJobsRequest r;
        r.set_page_token(token);
        vin::v1::ListJobsResponse page;
        const grpc::Status s = stub->ListJobs(&ctx, r, &page);
        if (!s.ok()) return CallFailed(s, err);
        for (const Job& j : page.jobs()) out << JobLine(j) << "\n";
        token = page.next_page_token();
      } while (!token.empty());
      out.flush();
      return kExitOk;
    }
    case JobOp::kWatch: {
      grpc::ClientContext ctx;
      Prepare(&ctx, o);
      vin::v1::GetJobRequest r;
      r.set_job_id(o.id);
      auto reader = stub->WatchJob(&ctx, r);
      Job job;
      while (reader->Read(&job)) out << JobLine(job) << std::endl;
      const grpc::Status s = reader->Finish();
      if (!s.ok()) return CallFailed(s, err);
      return job.state() == vin::v1::JOB_STATE_SUCCEEDED ? kExitOk
                                                         : kExitItemsFailed;
    }
    case JobOp::kDelete: {
      grpc::ClientContext ctx;
      Prepare(&ctx, o);
      vin::v1::DeleteJobRequest r;
      r.set_job_id(o.id);
      vin::v1::DeleteJobResponse done;
      const grpc::Status s = stub->DeleteJob(&ctx, r, &done);
      if (!s.ok()) return CallFailed(s, err);
      out << o.id << " deleted" << std::endl;
      return kExitOk;
    }
    case JobOp::kStatus:
    case JobOp::kCancel: {
      grpc::ClientContext ctx;
      Prepare(&ctx, o);
      Job job;
      grpc::Status s;
      if (o.op == JobOp::kStatus) {
        vin::v1::GetJobRequest r;
        r.set_job_id(o.id);
        s = stub->GetJob(&ctx, r, &job);
      } else {
        vin::v1::CancelJobRequest r;
        r.set_job_id(o.id);
        s = stub->CancelJob(&ctx, r, &job);
      }
      if (!s.ok()) return CallFailed(s, err);
      out << JobLine(job) << std::endl;
      return kExitOk;
    }
  }
  return kExitError;
}

}  // namespace vinctl
