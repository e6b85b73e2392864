// `vinctl job` against the real vin-server (DESIGN rule 20): a feed
// submitted as a job and fetched is the file `vinctl batch` writes for the
// same feed (the input's columns first, input order), failures and rows
// that cannot be sent included; so are the CSV results of the same feed
// posted over HTTP as text/csv.
#include <csignal>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "fake_vpic/fake_vpic.h"
#include "gtest/gtest.h"
#include "testing/eventually.h"
#include "testing/http_client.h"
#include "testing/real_server.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "testing/vin_gen.h"

namespace {

struct VinctlRun {
  absl::optional<int> exit;
  std::vector<std::string> lines;  // stdout and stderr
};

VinctlRun Vinctl(std::vector<std::string> args) {
  args.insert(args.begin(), VINCTL_BIN);
  testing_util::Subprocess p;
  VinctlRun run;
  if (!p.Start(args)) {
    ADD_FAILURE() << "cannot start " << VINCTL_BIN;
    return run;
  }
  run.exit = p.Wait(absl::Seconds(60));
  run.lines = p.LinesAtEnd(absl::Seconds(10));
  return run;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(VinctlJob, FetchWritesTheFileBatchWritesForTheSameFeed) {
  auto fake = fakevpic::FakeVpic::Start();
  ASSERT_TRUE(fake.ok()) << fake.status();
  testing_util::TempDir dir("vin-vinctl-job");
  testing_util::RealServer server;
  // No cache: the job's answers are live, as the batch's are.
  ASSERT_TRUE(server.Start({"--vpic_base_url=" + (*fake)->base_url(),
                            "--job_path=" + dir.File("jobs.db"),
                            "--cache_capacity=0"}));
  const std::string addr = absl::StrCat("--server=127.0.0.1:", server.port());
  {
    std::ofstream feed(dir.File("feed.csv"));
    feed << "stock,VIN,note\n";
    for (int i = 0; i < 1500; ++i) {
      feed << "S" << i << "," << testing_util::ValidVin(i) << ",\"a, b\"\n";
    }
    feed << "S-bad,1HGCM82633A00435X,check digit\n";
    feed << "S-extra,1HGCM82633A004352,x,y,z\n";  // a row that is not sent
    feed << "S-last," << testing_util::ValidVin(7) << ",repeat\n";
  }
  const VinctlRun batch = Vinctl({"batch", addr, "--in=" + dir.File("feed.csv"),
                                  "--out=" + dir.File("batch.csv")});
  ASSERT_EQ(batch.exit, 1) << absl::StrJoin(batch.lines, "\n");  // 2 failed

  const VinctlRun submit = Vinctl(
      {"job", "submit", addr, "--in=" + dir.File("feed.csv"), "--name=feed"});
  ASSERT_EQ(submit.exit, 0) << absl::StrJoin(submit.lines, "\n");
  ASSERT_EQ(submit.lines.size(), 1u);
  const std::string id(absl::StripAsciiWhitespace(submit.lines[0]));
  ASSERT_EQ(id.size(), 32u) << id;

  const VinctlRun fetch =
      Vinctl({"job", "fetch", id, addr, "--in=" + dir.File("feed.csv"),
              "--out=" + dir.File("job.csv")});
  ASSERT_EQ(fetch.exit, 1) << absl::StrJoin(fetch.lines, "\n");
  const std::string want = Slurp(dir.File("batch.csv"));
  EXPECT_GT(want.size(), 1500u * 50);
  EXPECT_EQ(Slurp(dir.File("job.csv")), want);
  EXPECT_FALSE(std::ifstream(dir.File("job.csv.fetch")).good());

  // The same feed posted over HTTP as CSV: its CSV results are the same
  // file (pages of 1,000, the header on each).
  const int http = server.http_port();
  testing_util::HttpResponse posted = testing_util::HttpCall(
      http, "POST", "/v1/jobs?display_name=posted", Slurp(dir.File("feed.csv")),
      {"Content-Type: text/csv"});
  ASSERT_EQ(posted.status, 200) << posted.body;
  const size_t at = posted.body.find("\"jobId\":\"") + 9;
  const std::string posted_id = posted.body.substr(at, 32);
  ASSERT_EQ(Vinctl({"job", "watch", posted_id, addr}).exit, 0);
  std::string csv, token;
  for (int page = 0; page < 10; ++page) {
    testing_util::HttpResponse r = testing_util::HttpGet(
        http,
        absl::StrCat("/v1/jobs/", posted_id,
                     "/results?format=csv&page_size=1000&page_token=", token));
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.Header("Content-Type"), "text/csv; charset=utf-8");
    // The header row on every page; kept once.
    csv += page == 0 ? r.body : r.body.substr(r.body.find('\n') + 1);
    token = r.Header("X-Next-Page-Token");
    if (r.Header("X-Results-Complete") == "true") break;
  }
  EXPECT_TRUE(token.empty());
  EXPECT_EQ(csv, want);

  const VinctlRun status = Vinctl({"job", "status", id, addr});
  ASSERT_EQ(status.exit, 0);
  ASSERT_FALSE(status.lines.empty());
  EXPECT_TRUE(
      absl::StrContains(status.lines[0], "succeeded 1501/1503 done, 2 failed"))
      << status.lines[0];
  const VinctlRun list = Vinctl({"job", "list", addr});
  ASSERT_EQ(list.exit, 0);
  ASSERT_EQ(list.lines.size(), 2u);  // newest first
  EXPECT_TRUE(absl::StartsWith(list.lines[0], posted_id));
  EXPECT_TRUE(absl::StartsWith(list.lines[1], id));
  EXPECT_EQ(Vinctl({"job", "delete", id, addr}).exit, 0);
  const VinctlRun gone = Vinctl({"job", "status", id, addr});
  EXPECT_EQ(gone.exit, 2);
  EXPECT_TRUE(absl::StrContains(absl::StrJoin(gone.lines, "\n"), "no job"));
}

// `vinctl job fetch` killed mid-way resumes from its `<out>.fetch`: run
// again, it writes the rest, and the file is the one batch writes.
TEST(VinctlJob, AnInterruptedFetchResumesWhereItStopped) {
  auto fake = fakevpic::FakeVpic::Start();
  ASSERT_TRUE(fake.ok()) << fake.status();
  testing_util::TempDir dir("vin-vinctl-resume");
  testing_util::RealServer server;
  // 20 requests of 50 VINs a second: the job takes about 4 s.
  ASSERT_TRUE(
      server.Start({"--vpic_base_url=" + (*fake)->base_url(),
                    "--job_path=" + dir.File("jobs.db"), "--cache_capacity=0",
                    "--upstream_rate=1200", "--upstream_burst=1"}));
  const std::string addr = absl::StrCat("--server=127.0.0.1:", server.port());
  {
    std::ofstream feed(dir.File("feed.txt"));
    for (int i = 0; i < 4000; ++i) feed << testing_util::ValidVin(i) << "\n";
  }
  ASSERT_EQ(Vinctl({"batch", addr, "--in=" + dir.File("feed.txt"),
                    "--out=" + dir.File("batch.csv")})
                .exit,
            0);
  const VinctlRun submit =
      Vinctl({"job", "submit", addr, "--in=" + dir.File("feed.txt")});
  ASSERT_EQ(submit.exit, 0);
  const std::string id(absl::StripAsciiWhitespace(submit.lines[0]));
  const std::vector<std::string> fetch = {VINCTL_BIN,
                                          "job",
                                          "fetch",
                                          id,
                                          addr,
                                          "--in=" + dir.File("feed.txt"),
                                          "--out=" + dir.File("job.csv")};
  testing_util::Subprocess first;
  ASSERT_TRUE(first.Start(fetch));
  // Killed once it has written a page and the job still runs.
  EXPECT_TRUE(testing_util::Eventually([&] {
    std::ifstream state(dir.File("job.csv.fetch"));
    std::string token;
    int64_t written = 0;
    return std::getline(state, token) && (state >> written) && written >= 1000;
  }));
  first.Signal(SIGKILL);
  ASSERT_TRUE(first.Wait(absl::Seconds(10)).has_value());
  const std::string part = Slurp(dir.File("job.csv"));
  const std::string want = Slurp(dir.File("batch.csv"));
  ASSERT_LT(part.size(), want.size());
  EXPECT_EQ(want.compare(0, part.size(), part), 0);  // a prefix so far
  const VinctlRun again =
      Vinctl({"job", "fetch", id, addr, "--in=" + dir.File("feed.txt"),
              "--out=" + dir.File("job.csv")});
  if (again.exit != 0) {  // what the server said (a sanitizer's report)
    for (const std::string& line : server.proc().lines()) {
      if (line.find(" info ") == std::string::npos) std::cerr << line << "\n";
    }
  }
  ASSERT_EQ(again.exit, 0) << absl::StrJoin(again.lines, "\n");
  EXPECT_EQ(Slurp(dir.File("job.csv")), want);
  EXPECT_FALSE(std::ifstream(dir.File("job.csv.fetch")).good());
}

}  // namespace
