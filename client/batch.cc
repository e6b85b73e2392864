#include "client/batch.h"

#include <google/protobuf/util/time_util.h>
#include <grpcpp/client_context.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/optional.h"
#include "domain/failure.h"
#include "feed/feed.h"

namespace vinctl {
namespace {

using google::protobuf::util::TimeUtil;
using vin::v1::DecodeBatchRequest;
using vin::v1::DecodeBatchResponse;
using Stream =
    grpc::ClientReaderWriterInterface<DecodeBatchRequest, DecodeBatchResponse>;

absl::Status FromGrpc(const grpc::Status& s) {
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      absl::StrCat("DecodeBatch stream: ", s.error_message()));
}

std::string CodeName(grpc::StatusCode code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

// One batch run. The calling thread reads the input and sends requests; a
// reader thread consumes events; an optional progress thread redraws the
// progress line. Output is written by whichever thread completes the record
// at the head of the order, serialised by out_mu_.
class BatchRun {
 public:
  BatchRun(const BatchOptions& options, feed::FeedReader* feed,
           feed::ResultWriter* writer, std::ostream* progress)
      : options_(options), feed_(feed), writer_(writer), progress_(progress) {}

  absl::StatusOr<BatchSummary> Run(
      vin::v1::VinDecoderService::StubInterface* stub);

 private:
  struct Slot {
    std::vector<std::string> fields;
    absl::optional<feed::Outcome> outcome;
  };

  // Reads a record, waits for room in the window, sends it; again until the
  // input or the stream ends. A record is read before the wait, so the one
  // read when the stream ends (at least the first) is written as
  // STREAM_ENDED. Returns the input error that stopped it, if any.
  absl::Status SendRecords(Stream* stream);
  void ReadEvents(Stream* stream);
  // Returns whether the event finished its item.
  bool HandleEvent(const DecodeBatchResponse& event) ABSL_LOCKS_EXCLUDED(mu_);
  void NoteUnreachable(const feed::Outcome& outcome)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Complete(int64_t index, feed::Outcome outcome)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes out the finished records at the head of the order.
  void Flush() ABSL_LOCKS_EXCLUDED(out_mu_, mu_);
  void ShowProgress() ABSL_LOCKS_EXCLUDED(mu_);

  // Whether the record just read (one of records_, not yet sent) may go.
  bool CanSend() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return reader_finished_ || output_failed_ ||
           records_ - 1 - next_to_write_ < options_.window;
  }

  const BatchOptions options_;
  feed::FeedReader* const feed_;      // calling thread only
  feed::ResultWriter* const writer_;  // guarded by out_mu_ once threads run
  std::ostream* const progress_;
  grpc::ClientContext context_;
  absl::Time start_;

  // Serialises output writes; taken before mu_.
  absl::Mutex out_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  absl::Status output_status_ ABSL_GUARDED_BY(out_mu_);

  // Protects the records between reading and writing and the counters.
  mutable absl::Mutex mu_;
  absl::flat_hash_map<int64_t, Slot> slots_ ABSL_GUARDED_BY(mu_);
  int64_t next_to_write_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t records_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t bytes_read_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t done_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t failed_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, int64_t> failed_by_reason_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<int64_t> retrying_ ABSL_GUARDED_BY(mu_);
  // Rows whose last event was a QUEUED saying they wait for the rate cap:
  // when their request is expected, and whether they wait for NHTSA's peak
  // hours to pass (bulk held to its share of the rate).
  struct RateWait {
    absl::Time expected;
    bool peak = false;
  };
  absl::flat_hash_map<int64_t, RateWait> waiting_for_rate_ ABSL_GUARDED_BY(mu_);
  std::string unreachable_since_ ABSL_GUARDED_BY(mu_);
  bool reader_finished_ ABSL_GUARDED_BY(mu_) = false;
  bool output_failed_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;  // stops the progress thread
};

absl::StatusOr<BatchSummary> BatchRun::Run(
    vin::v1::VinDecoderService::StubInterface* stub) {
  if (options_.stagger > absl::ZeroDuration()) {
    absl::BitGen gen;
    absl::SleepFor(options_.stagger * absl::Uniform(gen, 0.0, 1.0));
  }
  start_ = absl::Now();
  if (options_.deadline > absl::ZeroDuration()) {
    context_.set_deadline(absl::ToChronoTime(start_ + options_.deadline));
  }
  if (!options_.tenant.empty()) {
    context_.AddMetadata("x-vin-tenant", options_.tenant);
  }
  {
    absl::MutexLock lock(&out_mu_);
    output_status_ = writer_->WriteHeader();
    if (!output_status_.ok()) {
      absl::MutexLock state_lock(&mu_);
      output_failed_ = true;  // read nothing, send nothing
    }
  }
  std::unique_ptr<Stream> stream = stub->DecodeBatch(&context_);
  std::thread reader([this, &stream] { ReadEvents(stream.get()); });
  std::thread progress_thread;
  if (options_.show_progress) {
    progress_thread = std::thread([this] { ShowProgress(); });
  }

  const absl::Status input_status = SendRecords(stream.get());
  stream->WritesDone();
  {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&reader_finished_));
  }
  reader.join();
  const grpc::Status rpc_status = stream->Finish();

  BatchSummary summary;
  {
    absl::MutexLock lock(&mu_);
    const std::string message =
        rpc_status.ok()
            ? "the stream ended without a terminal event for this item"
            : absl::StrCat("the stream ended before this item finished: ",
                           CodeName(rpc_status.error_code()), ": ",
                           rpc_status.error_message());
    for (int64_t i = next_to_write_; i < records_; ++i) {
      auto it = slots_.find(i);
      if (it != slots_.end() && !it->second.outcome.has_value()) {
        Complete(i, feed::Outcome::ClientFailure("STREAM_ENDED", message));
      }
    }
  }
  Flush();
  {
    absl::MutexLock lock(&mu_);
    finished_ = true;
    summary.records = records_;
    summary.done = done_;
    summary.failed = failed_;
    summary.failed_by_reason = failed_by_reason_;
    summary.vpic_unreachable_since = unreachable_since_;
  }
  if (progress_thread.joinable()) progress_thread.join();
  summary.elapsed = absl::Now() - start_;
  if (options_.show_progress) *progress_ << "\r\x1b[K";
  *progress_ << FormatSummary(summary) << std::endl;

  absl::Status output_status;
  {
    absl::MutexLock lock(&out_mu_);
    if (output_status_.ok()) output_status_ = writer_->Flush();
    output_status = output_status_;
  }
  if (!output_status.ok()) return output_status;
  if (!input_status.ok()) return input_status;
  if (!rpc_status.ok()) return FromGrpc(rpc_status);
  return summary;
}

absl::Status BatchRun::SendRecords(Stream* stream) {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (output_failed_) return absl::OkStatus();  // read nothing more
    }
    auto next = feed_->Next();
    if (!next.ok()) return next.status();
    if (!next->has_value()) return absl::OkStatus();
    feed::FeedRecord record = **std::move(next);
    const bool send = record.problem.empty();
    {
      absl::MutexLock lock(&mu_);
      ++records_;
      bytes_read_ = feed_->bytes_read();
      slots_[record.index].fields = std::move(record.fields);
      if (!send) {
        Complete(record.index,
                 feed::Outcome::ClientFailure("BAD_ROW", record.problem));
      }
    }
    if (!send) {
      Flush();
      continue;
    }
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &BatchRun::CanSend));
      if (reader_finished_ || output_failed_) return absl::OkStatus();
    }
    DecodeBatchRequest request;
    request.set_request_id(absl::StrCat(record.index));
    request.set_vin(std::move(record.vin));
    request.set_model_year(options_.model_year);
    request.set_priority(options_.priority);
    if (options_.warn_check_digit) {
      request.set_check_digit_policy(vin::v1::CHECK_DIGIT_POLICY_WARN);
    }
    // false: the stream is over; ReadEvents sees how it ended.
    if (!stream->Write(request)) return absl::OkStatus();
  }
}

void BatchRun::ReadEvents(Stream* stream) {
  DecodeBatchResponse event;
  while (stream->Read(&event)) {
    if (HandleEvent(event)) Flush();
  }
  absl::MutexLock lock(&mu_);
  reader_finished_ = true;
}

bool BatchRun::HandleEvent(const DecodeBatchResponse& event) {
  int64_t index = 0;
  if (!absl::SimpleAtoi(event.request_id(), &index)) return false;
  absl::MutexLock lock(&mu_);
  auto it = slots_.find(index);
  if (it == slots_.end() || it->second.outcome.has_value()) return false;
  switch (event.event_case()) {
    case DecodeBatchResponse::kQueued:
      if (event.queued().waiting_for_rate()) {
        waiting_for_rate_[index] = {
            absl::Now() + absl::Nanoseconds(TimeUtil::DurationToNanoseconds(
                              event.queued().estimated_wait())),
            event.queued().bulk_peak_hours()};
      }
      return false;
    case DecodeBatchResponse::kRetrying:
      waiting_for_rate_.erase(index);
      retrying_.insert(index);
      return false;
    case DecodeBatchResponse::kDone:
      Complete(index, feed::Outcome::Done(event.done().result()));
      return true;
    case DecodeBatchResponse::kFailed:
      Complete(index, feed::Outcome::Failed(event.failed()));
      return true;
    default:  // an event this client does not know
      return false;
  }
}

void BatchRun::Complete(int64_t index, feed::Outcome outcome) {
  retrying_.erase(index);
  waiting_for_rate_.erase(index);
  NoteUnreachable(outcome);
  if (outcome.done) {
    ++done_;
  } else {
    ++failed_;
    ++failed_by_reason_[outcome.failure_reason];
  }
  slots_[index].outcome = std::move(outcome);
}

// Whether the server says vPIC is unreachable: the latest answer that
// tells either way decides (a live vPIC answer says it is reachable).
void BatchRun::NoteUnreachable(const feed::Outcome& outcome) {
  std::string since;
  if (!outcome.done) {
    // The reason and the time, never the message's words.
    if (outcome.failure.reason_detail() ==
        domain::ErrorReasonName(domain::ErrorReason::kBreakerOpen)) {
      since = domain::UtcSeconds(absl::FromUnixSeconds(
          outcome.failure.upstream_unreachable_since().seconds()));
    }
  } else {
    for (const auto& note : outcome.result.notes()) {
      if (since.empty() && note.code() == domain::kUnreachableNote) {
        since = note.message();
      }
    }
    if (since.empty() && outcome.result.source() != vin::v1::SOURCE_VPIC) {
      return;  // a cache or snapshot answer says nothing of vPIC
    }
  }
  unreachable_since_ = since;
}

void BatchRun::Flush() {
  absl::MutexLock out_lock(&out_mu_);
  std::vector<std::pair<int64_t, Slot>> ready;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = slots_.find(next_to_write_);
         it != slots_.end() && it->second.outcome.has_value();
         it = slots_.find(next_to_write_)) {
      ready.emplace_back(it->first, std::move(it->second));
      slots_.erase(it);
      ++next_to_write_;
    }
  }
  if (ready.empty() || !output_status_.ok()) return;
  for (const auto& [index, slot] : ready) {
    output_status_ = writer_->Write(index, slot.fields, *slot.outcome);
    if (!output_status_.ok()) break;
  }
  if (output_status_.ok()) output_status_ = writer_->Flush();
  if (!output_status_.ok()) {
    // Nothing more can be written: stop sending and end the stream.
    {
      absl::MutexLock lock(&mu_);
      output_failed_ = true;
    }
    context_.TryCancel();
  }
}

void BatchRun::ShowProgress() {
  mu_.Lock();
  while (!finished_) {
    mu_.AwaitWithTimeout(absl::Condition(&finished_),
                         options_.progress_interval);
    if (finished_) break;
    ProgressSnapshot s;
    s.done = done_;
    s.failed = failed_;
    s.retrying = static_cast<int64_t>(retrying_.size());
    s.waiting_for_rate = static_cast<int64_t>(waiting_for_rate_.size());
    const absl::Time now = absl::Now();
    for (const auto& [index, wait] : waiting_for_rate_) {
      if (wait.peak) ++s.waiting_at_peak;
      s.longest_rate_wait = std::max(s.longest_rate_wait, wait.expected - now);
    }
    s.records_read = records_;
    s.bytes_read = bytes_read_;
    s.input_size = options_.input_size;
    s.vpic_unreachable_since = unreachable_since_;
    s.elapsed = absl::Now() - start_;
    mu_.Unlock();
    *progress_ << '\r' << FormatProgressLine(s) << "\x1b[K" << std::flush;
    mu_.Lock();
  }
  mu_.Unlock();
}

}  // namespace

absl::StatusOr<BatchSummary> RunBatch(
    const BatchOptions& options,
    vin::v1::VinDecoderService::StubInterface* stub, std::istream& in,
    std::ostream& out, std::ostream& progress) {
  if (options.window < 1) {
    return absl::InvalidArgumentError("the window must be at least 1");
  }
  auto feed = feed::FeedReader::Open(&in);
  if (!feed.ok()) return feed.status();
  feed::ResultWriter writer(options.format, (*feed)->columns(), &out);
  BatchRun run(options, feed->get(), &writer, &progress);
  return run.Run(stub);
}

int BatchExitCode(const absl::StatusOr<BatchSummary>& result) {
  if (!result.ok()) return kExitError;
  return result->failed > 0 ? kExitItemsFailed : kExitOk;
}

}  // namespace vinctl
