// A job's client as the process tests use it (job_process_test.cc,
// job_fleet_test.cc): a job created over gRPC, read, watched, its results
// listed page by page; and what the fake vPIC was asked, by VIN.
#ifndef VIN_TESTS_JOBS_JOB_CLIENT_H_
#define VIN_TESTS_JOBS_JOB_CLIENT_H_

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "fake_vpic/fake_vpic.h"
#include "gtest/gtest.h"
#include "testing/vin_gen.h"
#include "vin/v1/jobs.grpc.pb.h"

namespace job_test {

using Stub = vin::v1::VinJobService::Stub;

// A job of `items` VINs (testing_util::ValidVin(0...)), in messages of
// 1,000; the status of its creation, and the Job in `job`.
inline grpc::Status TryCreateJob(Stub* stub, int items, vin::v1::Job* job) {
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
  auto writer = stub->CreateJob(&ctx, job);
  vin::v1::CreateJobRequest spec;
  spec.mutable_spec()->set_display_name("dealer feed");
  writer->Write(spec);
  for (int i = 0; i < items; i += 1000) {
    vin::v1::CreateJobRequest part;
    for (int k = i; k < std::min(items, i + 1000); ++k) {
      part.mutable_items()->add_items()->set_vin(testing_util::ValidVin(k));
    }
    if (!writer->Write(part)) break;
  }
  writer->WritesDone();
  return writer->Finish();
}

// The same, expected to succeed: the job's id.
inline std::string CreateJob(Stub* stub, int items) {
  vin::v1::Job job;
  const grpc::Status s = TryCreateJob(stub, items, &job);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(job.items_total(), items);
  return job.job_id();
}

inline grpc::Status TryGet(Stub* stub, const std::string& id,
                           vin::v1::Job* job) {
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
  vin::v1::GetJobRequest r;
  r.set_job_id(id);
  return stub->GetJob(&ctx, r, job);
}

inline vin::v1::Job Get(Stub* stub, const std::string& id) {
  vin::v1::Job job;
  const grpc::Status s = TryGet(stub, id, &job);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return job;
}

// Follows WatchJob until the job reaches `done` finished items or its end.
inline vin::v1::Job WatchUntil(Stub* stub, const std::string& id,
                               int64_t done) {
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(120)));
  vin::v1::GetJobRequest r;
  r.set_job_id(id);
  auto reader = stub->WatchJob(&ctx, r);
  vin::v1::Job job, last;
  while (reader->Read(&job)) {
    last = job;
    if (job.items_done() + job.items_failed() >= done) {
      ctx.TryCancel();
      break;
    }
  }
  reader->Finish();
  return last;
}

// Every listed result, page by page, from `token` on (the first page's
// with none); `complete` says whether the last page said so, and `pages`
// (when given) gets at most that many pages.
inline std::vector<vin::v1::JobResult> Results(
    Stub* stub, const std::string& id, bool* complete, std::string token = "",
    int pages = -1, std::string* next = nullptr) {
  std::vector<vin::v1::JobResult> out;
  while (pages-- != 0) {
    grpc::ClientContext ctx;
    vin::v1::ListJobResultsRequest r;
    r.set_job_id(id);
    r.set_page_size(1000);
    r.set_page_token(token);
    vin::v1::ListJobResultsResponse page;
    const grpc::Status s = stub->ListJobResults(&ctx, r, &page);
    EXPECT_TRUE(s.ok()) << s.error_message();
    if (!s.ok()) break;
    for (const auto& res : page.results()) out.push_back(res);
    *complete = page.complete();
    token = page.next_page_token();
    if (next != nullptr) *next = token;
    if (page.complete() || page.results_size() == 0) break;
  }
  return out;
}

// Expects `results` to be the `items` VINs' decodes, each once, in order.
inline void ExpectEveryItemOnceInOrder(
    const std::vector<vin::v1::JobResult>& results, int items) {
  ASSERT_EQ(results.size(), static_cast<size_t>(items));
  for (int i = 0; i < items; ++i) {
    ASSERT_EQ(results[i].index(), i);
    ASSERT_EQ(results[i].vin(), testing_util::ValidVin(i));
    ASSERT_TRUE(results[i].has_result()) << results[i].DebugString();
  }
}

// How many times the fake vPIC was asked each VIN.
inline std::map<std::string, int> AskedByVin(const fakevpic::FakeVpic& fake) {
  std::map<std::string, int> asked;
  for (const auto& r : fake.Requests()) {
    for (const auto& [vin, year] : r.batch) ++asked[vin];
    if (!r.is_batch() && !r.vin.empty()) ++asked[r.vin];
  }
  return asked;
}

}  // namespace job_test

#endif  // VIN_TESTS_JOBS_JOB_CLIENT_H_
