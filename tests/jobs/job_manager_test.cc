// Bulk jobs on a fake clock (DESIGN rule 20): every item exactly once, in
// order, while pages are read; off-peak holding; cancel; the idempotency
// key; the tenant boundary; refusals that leave nothing; a restart.
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>

#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "domain/error_reason.h"
#include "gtest/gtest.h"
#include "jobs/job_fixture.h"
#include "server/jobs/job_mapping.h"

namespace server {
namespace {

using vin::v1::Job;
using vin::v1::JobResult;

// Every index once, in order, 0..n-1, with the VIN sent at it.
void ExpectEveryItemOnceInOrder(const std::vector<JobResult>& got,
                                const std::vector<std::string>& vins) {
  for (size_t i = 0; i < got.size() && i < vins.size(); ++i) {
    ASSERT_EQ(got[i].index(), static_cast<int64_t>(i));
    ASSERT_EQ(got[i].vin(), vins[i]);
    ASSERT_EQ(got[i].request_id(), absl::StrCat("#", i));
  }
  ASSERT_EQ(got.size(), vins.size());
}

TEST_F(JobManagerTest, AJobBehindTheRateListsEveryItemOnceInOrderWhileRead) {
  engine::EngineOptions o;
  o.budget.rate_per_minute = 1000;  // 50 VINs a request: 5,000 in 6 s
  o.budget.burst = 10;
  MakeEngine(o);
  MakeManager();
  const std::vector<std::string> vins = Vins(5000);
  absl::StatusOr<Job> job = Create(Spec(), vins);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->state(), vin::v1::JOB_STATE_PENDING);
  EXPECT_EQ(job->items_total(), 5000);
  EXPECT_EQ(job->job_id().size(), 32u);

  std::vector<JobResult> got;
  std::string token;
  bool complete = false;
  int pages_read_while_running = 0;
  for (int step = 0; step < 20000 && !complete; ++step) {
    Step();
    if (step % 50 == 0) {
      const size_t before = got.size();
      ReadPages(job->job_id(), &token, &got, &complete);
      if (!complete && got.size() > before) ++pages_read_while_running;
    }
  }
  if (!complete) ReadPages(job->job_id(), &token, &got, &complete);
  ASSERT_TRUE(complete);
  EXPECT_GT(pages_read_while_running, 3);
  ExpectEveryItemOnceInOrder(got, vins);
  for (const JobResult& r : got) {
    ASSERT_TRUE(r.has_result()) << r.DebugString();
    EXPECT_EQ(r.result().vin(), r.vin());
  }
  const Job done = Get(job->job_id());
  EXPECT_EQ(done.state(), vin::v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(done.items_done(), 5000);
  EXPECT_EQ(done.items_pending(), 0);
  // Every VIN asked upstream once, under the rate: at least 100 requests'
  // worth of tokens (6 s at 1,000 a minute less the burst).
  const std::vector<std::string> sent = SentVins();
  EXPECT_EQ(std::set<std::string>(sent.begin(), sent.end()).size(), 5000u);
  EXPECT_EQ(sent.size(), 5000u);
  EXPECT_GE(SendTimes().back(), absl::Seconds(5));
}

TEST_F(JobManagerTest, OffPeakHoldsUntilNhtsaBusinessDayEndsThenRuns) {
  // Tuesday 8 December 2026, 10:00 in New York (15:00 UTC).
  absl::Time tuesday_10 = absl::FromCivil(absl::CivilMinute(2026, 12, 8, 15, 0),
                                          absl::UTCTimeZone());
  clock_.Advance(tuesday_10 - clock_.Now());
  auto peak =
      upstream::PeakHours::Parse("Mon-Fri 06:00-18:00 America/New_York");
  ASSERT_TRUE(peak.ok()) << peak.status();
  engine::EngineOptions o;
  o.peak_hours = *peak;
  MakeEngine(o);
  JobOptions j;
  j.peak_hours = *peak;
  MakeManager(j);
  absl::StatusOr<Job> job =
      Create(Spec(vin::v1::JOB_SCHEDULE_OFF_PEAK), Vins(20));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_TRUE(job->held_for_off_peak());
  const absl::Time six_pm = tuesday_10 + absl::Hours(8);  // 23:00 UTC
  EXPECT_EQ(job->estimated_start().seconds(), absl::ToUnixSeconds(six_pm));

  while (clock_.Now() < six_pm - absl::Minutes(1)) Step(absl::Minutes(1));
  EXPECT_TRUE(upstream_->sent().empty());
  Job held = Get(job->job_id());
  EXPECT_EQ(held.state(), vin::v1::JOB_STATE_PENDING);
  EXPECT_TRUE(held.held_for_off_peak());

  for (int i = 0;
       i < 500 && Get(job->job_id()).state() != vin::v1::JOB_STATE_SUCCEEDED;
       ++i) {
    Step(absl::Milliseconds(200));
  }
  const Job done = Get(job->job_id());
  EXPECT_EQ(done.state(), vin::v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(done.items_done(), 20);
  ASSERT_FALSE(upstream_->sent().empty());
  EXPECT_GE(upstream_->sent().front().at, six_pm);
  EXPECT_FALSE(done.held_for_off_peak());
}

TEST_F(JobManagerTest, NotBeforeHoldsTheJobUntilItsTime) {
  MakeEngine();
  MakeManager();
  vin::v1::JobSpec spec = Spec();
  const absl::Time at = clock_.WallNow() + absl::Minutes(30);
  spec.mutable_not_before()->set_seconds(absl::ToUnixSeconds(at));
  absl::StatusOr<Job> job = Create(spec, Vins(3));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->estimated_start().seconds(), absl::ToUnixSeconds(at));
  while (clock_.WallNow() < at - absl::Minutes(1)) Step(absl::Minutes(1));
  EXPECT_TRUE(upstream_->sent().empty());
  for (int i = 0; i < 200 && Get(job->job_id()).items_done() < 3; ++i) {
    Step(absl::Seconds(1));
  }
  EXPECT_EQ(Get(job->job_id()).state(), vin::v1::JOB_STATE_SUCCEEDED);
}

TEST_F(JobManagerTest, CancelMidRunFailsWhatIsLeftAndAsksNothingMore) {
  engine::EngineOptions o;
  o.budget.rate_per_minute = 60;  // one request a second
  o.budget.burst = 1;
  MakeEngine(o);
  MakeManager();
  const std::vector<std::string> vins = Vins(400);
  absl::StatusOr<Job> job = Create(Spec(), vins);
  ASSERT_TRUE(job.ok()) << job.status();
  while (Get(job->job_id()).items_done() < 100) Step(absl::Milliseconds(100));
  // What the metrics read while it runs (vin_jobs, vin_job_*).
  const JobManager::Stats running = manager_->GetStats();
  EXPECT_EQ(running.jobs_by_state[static_cast<int>(jobs::JobState::kRunning)],
            1);
  EXPECT_EQ(running.items_waiting, 400 - running.items_done);
  EXPECT_GE(running.oldest_running_age, absl::Seconds(1));
  EXPECT_GT(running.in_flight, 0);
  absl::StatusOr<Job> cancelled = manager_->Cancel("default", job->job_id());
  ASSERT_TRUE(cancelled.ok()) << cancelled.status();
  EXPECT_EQ(cancelled->state(), vin::v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(cancelled->items_done() + cancelled->items_failed(), 400);
  EXPECT_EQ(cancelled->items_pending(), 0);
  const size_t sent_at_cancel = upstream_->sent().size();
  for (int i = 0; i < 50; ++i) Step(absl::Milliseconds(100));
  EXPECT_EQ(upstream_->sent().size(), sent_at_cancel);
  // Cancelling again answers the same job.
  absl::StatusOr<Job> again = manager_->Cancel("default", job->job_id());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->items_failed(), cancelled->items_failed());

  std::vector<JobResult> got;
  std::string token;
  bool complete = false;
  ReadPages(job->job_id(), &token, &got, &complete, 1000);
  ASSERT_TRUE(complete);
  ExpectEveryItemOnceInOrder(got, vins);
  int failed = 0;
  for (const JobResult& r : got) {
    if (r.has_failure()) {
      ++failed;
      EXPECT_EQ(r.failure().reason(), vin::v1::FAILURE_REASON_CANCELLED);
      EXPECT_EQ(r.failure().reason_detail(), "CANCELLED");
    }
  }
  EXPECT_EQ(failed, cancelled->items_failed());
  EXPECT_GT(failed, 0);
}

TEST_F(JobManagerTest, AnIdempotencyKeySeenBeforeAnswersTheSameJob) {
  MakeEngine();
  MakeManager();
  vin::v1::JobSpec spec = Spec();
  spec.set_idempotency_key("feed-2026-12-06");
  absl::StatusOr<Job> first = Create(spec, Vins(10));
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<Job> second = Create(spec, Vins(10));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->job_id(), first->job_id());
  EXPECT_EQ(second->items_total(), 10);
  // Another tenant's key is its own.
  absl::StatusOr<Job> other = Create(spec, Vins(10), "dealer-b");
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_NE(other->job_id(), first->job_id());
  absl::StatusOr<vin::v1::ListJobsResponse> mine =
      manager_->List("default", {});
  ASSERT_TRUE(mine.ok());
  EXPECT_EQ(mine->jobs_size(), 1);
}

TEST_F(JobManagerTest, AnotherTenantsJobIsNotFound) {
  MakeEngine();
  MakeManager();
  absl::StatusOr<Job> job = Create(Spec(), Vins(5), "dealer-a");
  ASSERT_TRUE(job.ok()) << job.status();
  const std::string id = job->job_id();
  EXPECT_TRUE(absl::IsNotFound(manager_->Get("dealer-b", id).status()));
  EXPECT_TRUE(absl::IsNotFound(manager_->Cancel("dealer-b", id).status()));
  EXPECT_TRUE(absl::IsNotFound(manager_->Delete("dealer-b", id)));
  vin::v1::ListJobResultsRequest r;
  r.set_job_id(id);
  EXPECT_TRUE(absl::IsNotFound(manager_->Results("dealer-b", r).status()));
  absl::StatusOr<vin::v1::ListJobsResponse> theirs =
      manager_->List("dealer-b", {});
  ASSERT_TRUE(theirs.ok());
  EXPECT_EQ(theirs->jobs_size(), 0);
  // The job is untouched, and its own tenant sees it.
  EXPECT_EQ(Get(id, "dealer-a").state(), vin::v1::JOB_STATE_PENDING);
}

// Each refusal names its problem and leaves nothing in the store.
TEST_F(JobManagerTest, RefusalsAreClearAndStoreNothing) {
  MakeEngine();
  JobOptions o;
  o.notify_hosts = {"hooks.internal"};
  MakeManager(o);
  auto expect_refused = [&](absl::Status s, domain::ErrorReason reason,
                            absl::string_view says) {
    EXPECT_FALSE(s.ok());
    EXPECT_EQ(JobReasonOf(s), reason) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), says)) << s;
  };
  {  // 1,000,001 items
    auto upload = manager_->NewUpload("default");
    ASSERT_TRUE(upload->Spec(Spec()).ok());
    vin::v1::JobItems items;
    for (int i = 0; i < 1000001; ++i)
      items.add_items()->set_vin("1HGCM82633A004352");
    expect_refused(upload->Items(items), domain::ErrorReason::kJobTooManyItems,
                   "at most 1000000 items");
    EXPECT_FALSE(upload->Finish().ok());
  }
  {  // items before the spec
    auto upload = manager_->NewUpload("default");
    vin::v1::JobItems items;
    items.add_items()->set_vin("1HGCM82633A004352");
    expect_refused(upload->Items(items), domain::ErrorReason::kInvalidJobSpec,
                   "first message");
  }
  for (const char* url : {"ftp://hooks.internal/x", "file:///etc/passwd",
                          "http://elsewhere.example/hook"}) {
    vin::v1::JobSpec spec = Spec();
    spec.set_notify_url(url);
    expect_refused(Create(spec, Vins(2)).status(),
                   domain::ErrorReason::kInvalidJobSpec, "notify_url");
  }
  vin::v1::JobSpec listed = Spec();
  listed.set_notify_url("https://hooks.internal/done");
  // The store holds nothing of the refused jobs: no job, no byte.
  absl::StatusOr<vin::v1::ListJobsResponse> jobs =
      manager_->List("default", {});
  ASSERT_TRUE(jobs.ok());
  EXPECT_EQ(jobs->jobs_size(), 0);
  EXPECT_TRUE(Create(listed, Vins(2)).ok());

  expect_refused(
      manager_->Get("default", "00000000000000000000000000000000").status(),
      domain::ErrorReason::kJobNotFound, "no job");
  absl::StatusOr<Job> job = Create(Spec(), Vins(2));
  ASSERT_TRUE(job.ok());
  for (const std::string& forged : {std::string("10"), std::string("MTA"),
                                    std::string(43, 'A'), std::string("x")}) {
    vin::v1::ListJobResultsRequest r;
    r.set_job_id(job->job_id());
    r.set_page_token(forged);
    expect_refused(manager_->Results("default", r).status(),
                   domain::ErrorReason::kInvalidPageToken, "not issued");
  }
  expect_refused(manager_->Delete("default", job->job_id()),
                 domain::ErrorReason::kJobNotEnded, "cancel it");
}

// A job's end is POSTed to its notify_url once it is answered 2xx, after
// jittered retries; never before the end; given up an hour after it.
TEST_F(JobManagerTest, TheEndIsNotifiedOnceAfterRetries) {
  MakeEngine();
  JobOptions o;
  o.notify_hosts = {"hooks.internal:8443"};
  MakeManager(o);
  vin::v1::JobSpec spec = Spec();
  spec.set_notify_url("https://hooks.internal:8443/jobs/done");
  absl::StatusOr<Job> job = Create(spec, Vins(3));
  ASSERT_TRUE(job.ok()) << job.status();
  manager_->NotifyOnce();
  EXPECT_TRUE(posts_.empty());  // not ended yet
  while (Get(job->job_id()).state() != vin::v1::JOB_STATE_SUCCEEDED) Step();
  notify_status_ = {503, 0};  // an error, then no answer, then 200
  for (int i = 0; i < 600 && manager_->GetStats().notifications_sent == 0;
       ++i) {
    manager_->NotifyOnce();
    clock_.Advance(absl::Milliseconds(100));
  }
  ASSERT_EQ(posts_.size(), 3u);
  EXPECT_EQ(posts_[2].first, "https://hooks.internal:8443/jobs/done");
  Job told;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(posts_[2].second, &told)
          .ok());
  EXPECT_EQ(told.job_id(), job->job_id());
  EXPECT_EQ(told.state(), vin::v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(told.items_done(), 3);
  for (int i = 0; i < 100; ++i) {
    manager_->NotifyOnce();
    clock_.Advance(absl::Minutes(1));
  }
  EXPECT_EQ(posts_.size(), 3u);  // once answered, never again
  EXPECT_EQ(manager_->GetStats().notifications_sent, 1);
}

TEST_F(JobManagerTest, ANotificationNeverAnsweredIsGivenUpAfterAnHour) {
  MakeEngine();
  JobOptions o;
  o.notify_hosts = {"hooks.internal"};
  MakeManager(o);
  vin::v1::JobSpec spec = Spec();
  spec.set_notify_url("http://hooks.internal/done");
  absl::StatusOr<Job> job = Create(spec, Vins(1));
  ASSERT_TRUE(job.ok()) << job.status();
  while (Get(job->job_id()).state() != vin::v1::JOB_STATE_SUCCEEDED) Step();
  notify_status_.assign(1000, 500);
  for (int i = 0; i < 200; ++i) {
    manager_->NotifyOnce();
    clock_.Advance(absl::Minutes(1));
  }
  EXPECT_EQ(manager_->GetStats().notifications_failed, 1);
  EXPECT_EQ(manager_->GetStats().notifications_sent, 0);
  // Jittered, capped at 5 minutes: roughly an hour's worth of tries.
  EXPECT_GE(posts_.size(), 12u);
  EXPECT_LE(posts_.size(), 60u);
  const size_t tries = posts_.size();
  for (int i = 0; i < 20; ++i) {
    manager_->NotifyOnce();
    clock_.Advance(absl::Minutes(5));
  }
  EXPECT_EQ(posts_.size(), tries);
}

TEST_F(JobManagerTest, TooManyOpenJobsOfATenantAreRefused) {
  MakeEngine();
  JobOptions o;
  o.max_open = 2;
  MakeManager(o);
  vin::v1::JobSpec keyed = Spec();
  keyed.set_idempotency_key("k1");
  ASSERT_TRUE(Create(keyed, Vins(1)).ok());  // a key counts once
  // An upload under way counts among the tenant's open jobs.
  auto under_way = manager_->NewUpload("default");
  ASSERT_TRUE(under_way->Spec(Spec()).ok());
  EXPECT_TRUE(absl::IsResourceExhausted(Create(Spec(), Vins(1)).status()));
  under_way.reset();
  ASSERT_TRUE(Create(Spec(), Vins(1)).ok());
  const absl::Status third = Create(Spec(), Vins(1)).status();
  EXPECT_TRUE(absl::IsResourceExhausted(third)) << third;
  EXPECT_EQ(JobReasonOf(third), domain::ErrorReason::kJobLimitReached);
  EXPECT_TRUE(Create(Spec(), Vins(1), "another").ok());
}

// Waiting jobs start in creation order, in turn per tenant: with one job
// running at a time, A's second job waits for B's first.
TEST_F(JobManagerTest, WaitingJobsStartInTurnPerTenant) {
  MakeEngine();
  JobOptions o;
  o.concurrency = 1;
  MakeManager(o);
  absl::StatusOr<Job> a1 = Create(Spec(), Vins(2, 0), "a");
  absl::StatusOr<Job> a2 = Create(Spec(), Vins(2, 10), "a");
  absl::StatusOr<Job> b1 = Create(Spec(), Vins(2, 20), "b");
  ASSERT_TRUE(a1.ok() && a2.ok() && b1.ok());
  std::vector<std::string> started;
  for (int i = 0; i < 500 && started.size() < 3; ++i) {
    Step();
    for (const auto& [id, tenant] :
         {std::make_pair(a1->job_id(), "a"), std::make_pair(a2->job_id(), "a"),
          std::make_pair(b1->job_id(), "b")}) {
      if (Get(id, tenant).state() != vin::v1::JOB_STATE_PENDING &&
          std::find(started.begin(), started.end(), id) == started.end()) {
        started.push_back(id);
      }
    }
  }
  EXPECT_EQ(started, (std::vector<std::string>{a1->job_id(), b1->job_id(),
                                               a2->job_id()}));
}

// --job_max_bytes bounds the store: a job that would take it past is
// refused, and leaves nothing.
TEST_F(JobManagerTest, AJobPastTheStoresBytesIsRefused) {
  MakeEngine();
  JobOptions o;
  o.max_bytes = 20000;
  MakeManager(o);
  const absl::Status s = Create(Spec(), Vins(2000)).status();
  EXPECT_EQ(JobReasonOf(s), domain::ErrorReason::kJobLimitReached) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "--job_max_bytes")) << s;
  absl::StatusOr<vin::v1::ListJobsResponse> jobs =
      manager_->List("default", {});
  ASSERT_TRUE(jobs.ok());
  EXPECT_EQ(jobs->jobs_size(), 0);
  EXPECT_TRUE(Create(Spec(), Vins(10)).ok());  // a small one fits
}

// An ended job and its results are removed --job_retention after its end.
TEST_F(JobManagerTest, AnEndedJobIsRemovedAfterTheRetention) {
  MakeEngine();
  JobOptions o;
  o.retention = absl::Hours(1);
  MakeManager(o);
  absl::StatusOr<Job> job = Create(Spec(), Vins(3));
  ASSERT_TRUE(job.ok());
  while (Get(job->job_id()).state() != vin::v1::JOB_STATE_SUCCEEDED) Step();
  Step(absl::Minutes(59));
  Step();
  EXPECT_EQ(Get(job->job_id()).state(), vin::v1::JOB_STATE_SUCCEEDED);
  Step(absl::Minutes(2));
  Step();
  EXPECT_TRUE(
      absl::IsNotFound(manager_->Get("default", job->job_id()).status()));
  EXPECT_TRUE(std::any_of(log_.begin(), log_.end(), [](const std::string& l) {
    return absl::StrContains(l, "removed: ended over 1h ago");
  }));
}

// A page token of one job's results is no token of another's.
TEST_F(JobManagerTest, APageTokenBelongsToItsJob) {
  MakeEngine();
  MakeManager();
  absl::StatusOr<Job> a = Create(Spec(), Vins(3));
  absl::StatusOr<Job> b = Create(Spec(), Vins(3, 100));
  ASSERT_TRUE(a.ok() && b.ok());
  vin::v1::ListJobResultsRequest r;
  r.set_job_id(a->job_id());
  absl::StatusOr<vin::v1::ListJobResultsResponse> page =
      manager_->Results("default", r);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->results_size(), 0);  // nothing finished yet
  ASSERT_FALSE(page->next_page_token().empty());
  r.set_job_id(b->job_id());
  r.set_page_token(page->next_page_token());
  EXPECT_TRUE(
      absl::IsInvalidArgument(manager_->Results("default", r).status()));
}

TEST_F(JobManagerTest, ARestartResumesWithoutAskingFinishedItemsAgain) {
  engine::EngineOptions o;
  o.budget.rate_per_minute = 600;
  o.budget.burst = 1;
  o.cache_capacity = 0;  // only the job store remembers
  MakeEngine(o);
  MakeManager();
  const std::vector<std::string> vins = Vins(2000);
  absl::StatusOr<Job> job = Create(Spec(), vins);
  ASSERT_TRUE(job.ok()) << job.status();
  while (Get(job->job_id()).items_done() < 900) Step(absl::Milliseconds(50));
  std::vector<JobResult> before;
  std::string token;
  bool complete = false;
  ReadPages(job->job_id(), &token, &before, &complete, 1000);
  const std::vector<std::string> asked_before = SentVins();

  Restart();
  EXPECT_EQ(Get(job->job_id()).state(), vin::v1::JOB_STATE_RUNNING);
  for (int i = 0;
       i < 20000 && Get(job->job_id()).state() != vin::v1::JOB_STATE_SUCCEEDED;
       ++i) {
    Step(absl::Milliseconds(50));
  }
  ASSERT_EQ(Get(job->job_id()).state(), vin::v1::JOB_STATE_SUCCEEDED);
  // What was listed before the restart is listed the same after it.
  std::vector<JobResult> again;
  std::string fresh;
  ReadPages(job->job_id(), &fresh, &again, &complete, 1000);
  ASSERT_TRUE(complete);
  ExpectEveryItemOnceInOrder(again, vins);
  for (size_t i = 0; i < before.size(); ++i) {
    ASSERT_TRUE(
        google::protobuf::util::MessageDifferencer::Equals(again[i], before[i]))
        << i << ": " << again[i].DebugString() << " was "
        << before[i].DebugString();
  }
  // The token read before the restart goes on where it stopped.
  std::vector<JobResult> rest = before;
  ReadPages(job->job_id(), &token, &rest, &complete, 1000);
  ExpectEveryItemOnceInOrder(rest, vins);
  // No item finished before the restart was asked after it.
  std::set<std::string> finished;
  for (const JobResult& r : before) finished.insert(r.vin());
  const std::vector<std::string> asked_after = SentVins();
  for (const std::string& v : asked_after) {
    EXPECT_EQ(finished.count(v), 0u) << v << " decoded again";
  }
  EXPECT_LE(asked_before.size() + asked_after.size(), vins.size() + 256);
}

}  // namespace
}  // namespace server
