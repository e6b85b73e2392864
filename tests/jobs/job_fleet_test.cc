// Bulk jobs in a fleet (DESIGN rule 20, `--redis_url`): three vin-server
// processes share a real redis-server and one fake vPIC. A job created on
// one is read on the others; the replica working it is SIGKILLed mid-job and
// another finishes it within the lease, every item listed once, in order,
// and no VIN asked twice but those in flight at the kill. Redis that stops
// answering refuses creation (UNAVAILABLE) and pauses the running job,
// which goes on when Redis is back.
#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>

#include <csignal>
#include <iostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "fake_vpic/fake_vpic.h"
#include "gtest/gtest.h"
#include "jobs/job_client.h"
#include "testing/eventually.h"
#include "testing/http_receiver.h"
#include "testing/real_server.h"
#include "testing/redis_server.h"
#include "testing/vin_gen.h"
#include "vin/v1/jobs.grpc.pb.h"

namespace {

using testing_util::RealServer;
using vin::v1::Job;

constexpr int kItems = 10000;
constexpr int kWindow = 256;

class JobFleetTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(redis_.Start(&error)) << error;
    auto fake = fakevpic::FakeVpic::Start();
    ASSERT_TRUE(fake.ok()) << fake.status();
    fake_ = *std::move(fake);
  }

  void TearDown() override {
    if (!HasFailure()) return;
    // What the replicas said (a sanitizer's report, a refusal).
    for (const auto& server : servers_) {
      if (server == nullptr) continue;
      for (const std::string& line : server->proc().lines()) {
        if (line.find(" info ") == std::string::npos) std::cerr << line << "\n";
      }
    }
  }

  // One replica; `rate`: vPIC requests a minute (50 VINs each).
  void AddReplica(int rate, std::vector<std::string> more = {}) {
    auto s = std::make_unique<RealServer>();
    std::vector<std::string> flags = {"--vpic_base_url=" + fake_->base_url(),
                                      "--redis_url=" + redis_.url(),
                                      "--fleet_size_hint=3",
                                      "--job_lease=2s",
                                      absl::StrCat("--upstream_rate=", rate),
                                      "--upstream_burst=10"};
    flags.insert(flags.end(), more.begin(), more.end());
    ASSERT_TRUE(s->Start(flags));
    stubs_.push_back(vin::v1::VinJobService::NewStub(
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", s->port()),
                            grpc::InsecureChannelCredentials())));
    servers_.push_back(std::move(s));
  }

  // The replica whose log says it runs job `id`, or -1.
  int Runner(const std::string& id) {
    for (size_t i = 0; i < servers_.size(); ++i) {
      if (servers_[i] == nullptr) continue;
      for (const std::string& line : servers_[i]->proc().lines()) {
        if (absl::StrContains(line, absl::StrCat("job ", id)) &&
            (absl::StrContains(line, " running: ") ||
             absl::StrContains(line, " resumed: "))) {
          return static_cast<int>(i);
        }
      }
    }
    return -1;
  }

  job_test::Stub* stub(int i) { return stubs_[i].get(); }

  // A job of `items` VINs created on replica `i`, its end to be told to
  // http://`host`/done.
  Job CreateNotified(int i, const std::string& host, int items) {
    grpc::ClientContext ctx;
    Job job;
    auto writer = stub(i)->CreateJob(&ctx, &job);
    vin::v1::CreateJobRequest spec;
    spec.mutable_spec()->set_notify_url(absl::StrCat("http://", host, "/done"));
    EXPECT_TRUE(writer->Write(spec));
    vin::v1::CreateJobRequest part;
    for (int k = 0; k < items; ++k) {
      part.mutable_items()->add_items()->set_vin(testing_util::ValidVin(k));
    }
    EXPECT_TRUE(writer->Write(part));
    writer->WritesDone();
    const grpc::Status s = writer->Finish();
    EXPECT_TRUE(s.ok()) << s.error_message();
    return job;
  }

  testing_util::RedisServer redis_;
  std::unique_ptr<fakevpic::FakeVpic> fake_;
  std::vector<std::unique_ptr<RealServer>> servers_;
  std::vector<std::unique_ptr<job_test::Stub>> stubs_;
};

TEST_F(JobFleetTest, AJobOutlivesTheReplicaWorkingIt) {
  // 3,000 VINs a second across the fleet: the job takes a few seconds.
  for (int i = 0; i < 3; ++i) AddReplica(1200);
  const std::string id = job_test::CreateJob(stub(0), kItems);
  // Read on the other two at once.
  for (int i : {1, 2}) {
    const Job seen = job_test::Get(stub(i), id);
    EXPECT_EQ(seen.job_id(), id);
    EXPECT_EQ(seen.items_total(), kItems);
  }
  const Job third = job_test::WatchUntil(stub(1), id, kItems / 3);
  ASSERT_LT(third.items_done(), kItems) << "finished before the kill";
  int victim = -1;
  ASSERT_TRUE(
      testing_util::Eventually([&] { return (victim = Runner(id)) >= 0; }));
  servers_[victim]->proc().Signal(SIGKILL);
  ASSERT_TRUE(servers_[victim]->proc().Wait(absl::Seconds(30)).has_value());
  const int asked_before = fake_->TotalVinsRequested();
  servers_[victim].reset();

  const int reader = victim == 0 ? 1 : 0;
  const int other = 3 - victim - reader;
  const Job end = job_test::WatchUntil(stub(reader), id, kItems);
  EXPECT_EQ(end.state(), vin::v1::JOB_STATE_SUCCEEDED) << end.DebugString();
  EXPECT_EQ(end.items_done(), kItems);
  // Another replica took it over.
  const int taker = Runner(id);
  EXPECT_NE(taker, victim);
  EXPECT_GE(taker, 0);
  // The first page on one replica, the rest on another with its token: a
  // token is the fleet's.
  bool complete = false;
  std::string token;
  auto results = job_test::Results(stub(reader), id, &complete, "", 1, &token);
  ASSERT_EQ(results.size(), 1000u);
  ASSERT_FALSE(token.empty());
  for (auto& r : job_test::Results(stub(other), id, &complete, token)) {
    results.push_back(std::move(r));
  }
  EXPECT_TRUE(complete);
  job_test::ExpectEveryItemOnceInOrder(results, kItems);
  // Each VIN asked once, but those in flight at the kill (the window).
  const std::map<std::string, int> asked = job_test::AskedByVin(*fake_);
  EXPECT_EQ(asked.size(), static_cast<size_t>(kItems));
  int twice = 0;
  for (const auto& [vin, n] : asked) twice += n - 1;
  EXPECT_LE(twice, kWindow);
  EXPECT_GT(asked_before, kItems / 3 - kWindow);
  // The test's Redis keeps nothing on disk: every replica says so.
  for (const auto& s : servers_) {
    if (s == nullptr) continue;
    EXPECT_TRUE(s->proc().WaitForLine("appendonly yes", absl::Seconds(1)));
  }
}

TEST_F(JobFleetTest, AJobCancelledOnAnotherReplicaStopsWhereItRuns) {
  for (int i = 0; i < 2; ++i) AddReplica(1200);
  const std::string id = job_test::CreateJob(stub(0), kItems);
  job_test::WatchUntil(stub(0), id, kItems / 10);
  int runner = -1;
  ASSERT_TRUE(
      testing_util::Eventually([&] { return (runner = Runner(id)) >= 0; }));
  const int other = 1 - runner;
  grpc::ClientContext ctx;
  vin::v1::CancelJobRequest cancel;
  cancel.set_job_id(id);
  Job cancelled;
  ASSERT_TRUE(stub(other)->CancelJob(&ctx, cancel, &cancelled).ok());
  EXPECT_EQ(cancelled.state(), vin::v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(cancelled.items_done() + cancelled.items_failed(), kItems);
  // The replica working it lets it go, and says so.
  ASSERT_TRUE(testing_util::Eventually([&] {
    return job_test::Get(stub(runner), id).state() ==
           vin::v1::JOB_STATE_CANCELLED;
  }));
  // Every item listed once: the finished ones decoded, the rest CANCELLED;
  // nothing finished after the cancel.
  bool complete = false;
  const auto results = job_test::Results(stub(runner), id, &complete);
  EXPECT_TRUE(complete);
  ASSERT_EQ(results.size(), static_cast<size_t>(kItems));
  int decoded = 0;
  for (int i = 0; i < kItems; ++i) {
    ASSERT_EQ(results[i].index(), i);
    if (results[i].has_result()) {
      ++decoded;
    } else {
      ASSERT_EQ(results[i].failure().reason(),
                vin::v1::FAILURE_REASON_CANCELLED)
          << results[i].DebugString();
    }
  }
  EXPECT_EQ(decoded, cancelled.items_done());
  const Job end = job_test::Get(stub(runner), id);
  EXPECT_EQ(end.items_done(), cancelled.items_done());
}

// Every replica sees the ended job due; the one holding its lease tells
// it, once.
TEST_F(JobFleetTest, TheEndIsToldOnceByTheFleet) {
  testing_util::HttpReceiver hook;
  const std::string host = absl::StrCat("127.0.0.1:", hook.port());
  for (int i = 0; i < 3; ++i) AddReplica(6000, {"--job_notify_hosts=" + host});
  const Job job = CreateNotified(0, host, 100);
  const auto posts = hook.WaitFor(1, absl::Seconds(60));
  ASSERT_EQ(posts.size(), 1u);
  Job told;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(posts[0].body, &told).ok());
  EXPECT_EQ(told.job_id(), job.job_id());
  EXPECT_EQ(told.state(), vin::v1::JOB_STATE_SUCCEEDED);
  // Told once: the fleet's count of notifications answered comes to 1.
  auto sent = [&] {
    double n = 0;
    for (const auto& server : servers_) {
      n += server->Metric("vin_job_notifications_total");
    }
    return n;
  };
  EXPECT_TRUE(testing_util::Eventually([&] { return sent() == 1; }));
  EXPECT_EQ(hook.WaitFor(1, absl::ZeroDuration()).size(), 1u);
}

// A receiver that keeps failing: the replica holding the ended job tries
// again and again; the others, which see the job due as well, never try.
TEST_F(JobFleetTest, OneReplicaTriesAgainWhileTheReceiverFails) {
  testing_util::HttpReceiver hook(503);
  const std::string host = absl::StrCat("127.0.0.1:", hook.port());
  for (int i = 0; i < 3; ++i) AddReplica(6000, {"--job_notify_hosts=" + host});
  CreateNotified(1, host, 1);
  // Three tries (the first, then the jittered retries from 1 s on).
  ASSERT_EQ(hook.WaitFor(3, absl::Seconds(60)).size(), 3u);
  int trying = 0;
  for (const auto& server : servers_) {
    for (const std::string& line : server->proc().lines()) {
      if (absl::StrContains(line, "notify_url answered 503")) {
        ++trying;
        break;
      }
    }
  }
  EXPECT_EQ(trying, 1);
}

TEST_F(JobFleetTest, RedisNotAnsweringRefusesJobsAndPausesTheRunningOne) {
  // 1,000 VINs a second: the job runs ten seconds.
  AddReplica(1200);
  const std::string id = job_test::CreateJob(stub(0), kItems);
  job_test::WatchUntil(stub(0), id, kItems / 10);
  redis_.Pause();
  // No job only one replica knows.
  Job refused;
  const grpc::Status s = job_test::TryCreateJob(stub(0), 10, &refused);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_TRUE(absl::StrContains(s.error_details(), "JOB_STORE_UNAVAILABLE"));
  // The running job says it waits for the store.
  Job paused;
  ASSERT_TRUE(testing_util::Eventually(
      [&] {
        paused = job_test::Get(stub(0), id);
        return absl::StrContains(paused.message(), "job store");
      },
      absl::Seconds(30)))
      << paused.DebugString();
  EXPECT_EQ(paused.state(), vin::v1::JOB_STATE_RUNNING);
  redis_.Resume();
  const Job end = job_test::WatchUntil(stub(0), id, kItems);
  EXPECT_EQ(end.state(), vin::v1::JOB_STATE_SUCCEEDED) << end.DebugString();
  EXPECT_EQ(end.message(), "");
  bool complete = false;
  job_test::ExpectEveryItemOnceInOrder(
      job_test::Results(stub(0), id, &complete), kItems);
  EXPECT_TRUE(complete);
}

}  // namespace
