// Bulk jobs against the real vin-server binary (DESIGN rule 20): a job
// outlives the process that ran it. Killed (SIGKILL) or stopped (SIGTERM)
// at about half of a 20,000-VIN job, a restarted server finishes it: every
// item listed exactly once, in order, and no VIN asked of vPIC twice but
// those in flight at the crash (at most the window). A job file that is
// not one is set aside, named, and the server starts.
#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "fake_vpic/fake_vpic.h"
#include "gtest/gtest.h"
#include "jobs/job_client.h"
#include "testing/eventually.h"
#include "testing/http_client.h"
#include "testing/http_receiver.h"
#include "testing/real_server.h"
#include "testing/temp_dir.h"
#include "testing/vin_gen.h"
#include "vin/v1/jobs.grpc.pb.h"

namespace {

using testing_util::RealServer;
using vin::v1::Job;

constexpr int kItems = 20000;
constexpr int kWindow = 256;

class JobProcessTest : public testing::Test {
 protected:
  void SetUp() override {
    auto fake = fakevpic::FakeVpic::Start();
    ASSERT_TRUE(fake.ok()) << fake.status();
    fake_ = *std::move(fake);
  }

  std::unique_ptr<RealServer> StartServer() {
    auto s = std::make_unique<RealServer>();
    const bool started =
        s->Start({"--vpic_base_url=" + fake_->base_url(),
                  "--job_path=" + dir_.File("jobs.db"),
                  // 100 requests (5,000 VINs) a second
                  "--upstream_rate=6000", "--upstream_burst=10"});
    EXPECT_TRUE(started);
    stub_ = vin::v1::VinJobService::NewStub(
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", s->port()),
                            grpc::InsecureChannelCredentials()));
    return s;
  }

  std::string CreateJob(int items = kItems) {
    return job_test::CreateJob(stub_.get(), items);
  }
  Job Get(const std::string& id) { return job_test::Get(stub_.get(), id); }
  Job WatchUntil(const std::string& id, int64_t done) {
    return job_test::WatchUntil(stub_.get(), id, done);
  }
  std::vector<vin::v1::JobResult> Results(const std::string& id,
                                          bool* complete) {
    return job_test::Results(stub_.get(), id, complete);
  }

  // A job stopped at about half by `signal` finishes after a restart.
  void StopAtHalfAndFinish(int signal) {
    auto server = StartServer();
    const std::string id = CreateJob();
    const Job half = WatchUntil(id, kItems / 2);
    ASSERT_LT(half.items_done(), kItems) << "finished before the stop";
    server->proc().Signal(signal);
    ASSERT_TRUE(server->proc().Wait(absl::Seconds(30)).has_value());
    const int asked_before = fake_->TotalVinsRequested();
    server.reset();

    server = StartServer();
    const Job end = WatchUntil(id, kItems);
    EXPECT_EQ(end.state(), vin::v1::JOB_STATE_SUCCEEDED) << end.DebugString();
    EXPECT_EQ(end.items_done(), kItems);
    bool complete = false;
    const std::vector<vin::v1::JobResult> results = Results(id, &complete);
    if (!complete) {  // what the restarted server said (a sanitizer's report)
      const auto code = server->proc().Wait(absl::Seconds(1));
      ADD_FAILURE() << "server exit: " << (code ? *code : -1);
      for (const std::string& line : server->proc().lines()) {
        if (line.find(" info ") == std::string::npos) std::cerr << line << "\n";
      }
    }
    EXPECT_TRUE(complete);
    job_test::ExpectEveryItemOnceInOrder(results, kItems);
    // Each VIN asked once, but those in flight at the stop (the window).
    const std::map<std::string, int> asked = job_test::AskedByVin(*fake_);
    EXPECT_EQ(asked.size(), static_cast<size_t>(kItems));
    int twice = 0;
    for (const auto& [vin, n] : asked) twice += n - 1;
    EXPECT_LE(twice, kWindow);
    EXPECT_EQ(fake_->TotalVinsRequested(), kItems + twice);
    EXPECT_GT(asked_before, kItems / 2 - kWindow);
  }

  testing_util::TempDir dir_{"vin-jobproc"};
  std::unique_ptr<fakevpic::FakeVpic> fake_;
  std::unique_ptr<vin::v1::VinJobService::Stub> stub_;
};

TEST_F(JobProcessTest, AJobKilledAtHalfFinishesAfterARestart) {
  StopAtHalfAndFinish(SIGKILL);
}

TEST_F(JobProcessTest, AJobStoppedAtHalfFinishesAfterARestart) {
  StopAtHalfAndFinish(SIGTERM);
}

TEST_F(JobProcessTest, AJobFileThatIsNotOneIsSetAsideAndTheServerStarts) {
  {
    std::ofstream f(dir_.File("jobs.db"));
    f << std::string(4096, 'x');
  }
  auto server = StartServer();
  ASSERT_TRUE(
      server->proc().WaitForLine("moved it to", absl::Seconds(5)).has_value());
  bool named = false;
  for (const std::string& line : server->proc().lines()) {
    named |= absl::StrContains(line, "job store") &&
             absl::StrContains(line, "jobs.db") &&
             absl::StrContains(line, "is not a SQLite database");
  }
  EXPECT_TRUE(named);
  // Jobs work on the new store.
  EXPECT_EQ(WatchUntil(CreateJob(3), 3).items_done(), 3);
}

// The gateway's /v1/jobs routes over the same jobs.
TEST_F(JobProcessTest, JobsOverHttp) {
  auto server = StartServer();
  const int port = server->http_port();
  const std::string feed =
      absl::StrCat("{\"vin\":\"", testing_util::ValidVin(1), "\"}\n",
                   "{\"vin\":\"1HGCM82633A00435X\",\"requestId\":\"bad\"}\n",
                   "{\"vin\":\"", testing_util::ValidVin(2), "\"}\n");
  testing_util::HttpResponse created = testing_util::HttpCall(
      port, "POST", "/v1/jobs?display_name=feed&schedule=now", feed,
      {"Content-Type: application/x-ndjson"});
  ASSERT_EQ(created.status, 200) << created.body;
  Job job;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(created.body, &job).ok())
      << created.body;
  EXPECT_EQ(job.items_total(), 3);
  EXPECT_EQ(job.spec().display_name(), "feed");
  EXPECT_EQ(WatchUntil(job.job_id(), 3).state(), vin::v1::JOB_STATE_SUCCEEDED);

  testing_util::HttpResponse got =
      testing_util::HttpGet(port, "/v1/jobs/" + job.job_id());
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_TRUE(absl::StrContains(got.body, "\"itemsDone\":\"2\"")) << got.body;
  EXPECT_TRUE(absl::StrContains(got.body, "\"itemsFailed\":\"1\"")) << got.body;

  testing_util::HttpResponse page = testing_util::HttpGet(
      port, "/v1/jobs/" + job.job_id() + "/results?format=ndjson&page_size=2");
  ASSERT_EQ(page.status, 200) << page.body;
  std::vector<std::string> lines =
      absl::StrSplit(page.body, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << page.body;
  EXPECT_TRUE(absl::StrContains(lines[0], "\"index\":\"0\"") ||
              !absl::StrContains(lines[0], "\"index\""))
      << lines[0];
  EXPECT_TRUE(absl::StrContains(lines[1], "\"requestId\":\"bad\""));
  EXPECT_TRUE(absl::StrContains(lines[1], "INVALID_VIN_CHECK_DIGIT"));
  EXPECT_TRUE(absl::StrContains(lines[2], "\"complete\":false"));
  const size_t at = lines[2].find("\"nextPageToken\":\"") + 17;
  const std::string token = lines[2].substr(at, lines[2].find('"', at) - at);
  testing_util::HttpResponse rest = testing_util::HttpGet(
      port, "/v1/jobs/" + job.job_id() + "/results?page_token=" + token);
  ASSERT_EQ(rest.status, 200) << rest.body;
  EXPECT_TRUE(absl::StrContains(rest.body, "\"index\":\"2\""));
  EXPECT_TRUE(absl::StrContains(rest.body, "\"complete\":true"));

  // Refusals: a token not issued, a notify URL, a method, a running delete.
  testing_util::HttpResponse forged = testing_util::HttpGet(
      port, "/v1/jobs/" + job.job_id() + "/results?page_token=MTA");
  EXPECT_EQ(forged.status, 400);
  EXPECT_TRUE(absl::StrContains(forged.body, "INVALID_PAGE_TOKEN"));
  testing_util::HttpResponse notify = testing_util::HttpCall(
      port, "POST", "/v1/jobs?notify_url=gopher%3A%2F%2Fx", feed);
  EXPECT_EQ(notify.status, 400);
  EXPECT_TRUE(absl::StrContains(notify.body, "INVALID_JOB_SPEC"));
  EXPECT_EQ(
      testing_util::HttpCall(port, "PUT", "/v1/jobs/" + job.job_id()).status,
      405);
  testing_util::HttpResponse unknown =
      testing_util::HttpGet(port, "/v1/jobs/0123456789abcdef0123456789abcdef");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_TRUE(absl::StrContains(unknown.body, "JOB_NOT_FOUND"));
  EXPECT_EQ(
      testing_util::HttpCall(port, "DELETE", "/v1/jobs/" + job.job_id()).status,
      200);
  EXPECT_EQ(testing_util::HttpGet(port, "/v1/jobs/" + job.job_id()).status,
            404);
}

// notify_url (rule 20): the end of a job is POSTed once to a listed host,
// as the final Job in JSON; a host that is not listed is refused at
// creation and nothing is stored.
TEST(JobNotify, TheEndIsPostedOnceToAListedHost) {
  auto fake = fakevpic::FakeVpic::Start();
  ASSERT_TRUE(fake.ok()) << fake.status();
  testing_util::HttpReceiver hook;
  testing_util::TempDir dir("vin-jobnotify");
  testing_util::RealServer server;
  const std::string host = absl::StrCat("127.0.0.1:", hook.port());
  ASSERT_TRUE(server.Start({"--vpic_base_url=" + (*fake)->base_url(),
                            "--job_path=" + dir.File("jobs.db"),
                            "--job_notify_hosts=" + host}));
  const int http = server.http_port();
  const std::string feed =
      absl::StrCat("{\"vin\":\"", testing_util::ValidVin(1), "\"}\n");
  testing_util::HttpResponse refused = testing_util::HttpCall(
      http, "POST", "/v1/jobs?notify_url=http%3A%2F%2F127.0.0.2%3A9%2Fdone",
      feed);
  EXPECT_EQ(refused.status, 400);
  EXPECT_TRUE(absl::StrContains(refused.body, "not one of --job_notify_hosts"))
      << refused.body;
  testing_util::HttpResponse created = testing_util::HttpCall(
      http, "POST",
      absl::StrCat("/v1/jobs?notify_url=http%3A%2F%2F", host, "%2Fjobs%2Fdone"),
      feed);
  ASSERT_EQ(created.status, 200) << created.body;
  Job job;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(created.body, &job).ok());
  const auto posts = hook.WaitFor(1, absl::Seconds(30));
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_EQ(posts[0].method, "POST");
  EXPECT_EQ(posts[0].target, "/jobs/done");
  Job told;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(posts[0].body, &told).ok())
      << posts[0].body;
  EXPECT_EQ(told.job_id(), job.job_id());
  EXPECT_EQ(told.state(), vin::v1::JOB_STATE_SUCCEEDED);
  // Once: the receiver answered 204, and the job is marked told.
  EXPECT_TRUE(testing_util::Eventually(
      [&] { return server.Metric("vin_job_notifications_total") == 1; }));
  EXPECT_EQ(hook.WaitFor(1, absl::ZeroDuration()).size(), 1u);
  // The refused job left nothing: one job listed.
  testing_util::HttpResponse list = testing_util::HttpGet(http, "/v1/jobs");
  EXPECT_EQ(list.body.find("jobId"), list.body.rfind("jobId")) << list.body;
}

// Without --job_path the job methods name the flag.
TEST(JobsOff, EveryMethodNamesTheFlag) {
  RealServer server;
  ASSERT_TRUE(server.Start({"--vpic_base_url=http://127.0.0.1:9/api"}));
  auto stub = vin::v1::VinJobService::NewStub(
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", server.port()),
                          grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  vin::v1::GetJobRequest r;
  r.set_job_id("0123456789abcdef0123456789abcdef");
  Job job;
  const grpc::Status s = stub->GetJob(&ctx, r, &job);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "--job_path"))
      << s.error_message();
}

}  // namespace
