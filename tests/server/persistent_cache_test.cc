// The cache that survives restarts (DESIGN rule 14) on the real vin-server
// binary: decodes committed before a SIGTERM, or more than a commit
// interval before a SIGKILL, are answered from the file after a restart
// with no upstream request; a file at --cache_path that is not a cache is
// named in the log, set aside, and the server serves.
#include <grpcpp/create_channel.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "disk_cache/row_key.h"
#include "fake_vpic/fake_vpic.h"
#include "gtest/gtest.h"
#include "testing/batch_session.h"
#include "testing/eventually.h"
#include "testing/scrape.h"
#include "testing/subprocess.h"
#include "testing/vin_gen.h"
#include "vin/v1/vin.grpc.pb.h"

namespace {

using testing_util::Item;
using testing_util::ValidVin;

int PortOf(const std::string& line) {
  return std::stoi(line.substr(line.find("(port ") + 6));
}

// One vin-server process over `cache_path`, in front of `fake`.
class Server {
 public:
  Server(const std::string& vpic_url, const std::string& cache_path) {
    EXPECT_TRUE(process_.Start(
        {VIN_SERVER_BIN, "--listen=127.0.0.1:0",
         "--metrics_listen=127.0.0.1:0", "--vpic_base_url=" + vpic_url,
         "--cache_path=" + cache_path, "--upstream_rate=0",
         "--shutdown_grace=2s"}));
    auto started = process_.WaitForLine("listening on", absl::Seconds(30));
    EXPECT_TRUE(started.has_value());
    auto metrics = process_.WaitForLine("metrics on", absl::Seconds(5));
    EXPECT_TRUE(metrics.has_value());
    if (!started || !metrics) return;
    metrics_port_ = PortOf(*metrics);
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", PortOf(*started)),
                                   grpc::InsecureChannelCredentials());
    stub_ = vin::v1::VinDecoderService::NewStub(channel_);
  }
  testing_util::BatchOutcome Feed(int from, int n) {
    std::vector<vin::v1::DecodeBatchRequest> feed;
    for (int i = from; i < from + n; ++i) feed.push_back(Item(ValidVin(i)));
    return testing_util::RunBatch(stub_.get(), feed);
  }
  double Metric(const std::string& name) {
    std::string body;
    if (testing_util::HttpGet(metrics_port_, "/metrics", &body) != 200) return -1;
    return testing_util::Sum(testing_util::ParseSamples(body), name);
  }
  // Waits until `name` reaches `at_least` (the writer commits in the
  // background), polling the metrics endpoint.
  bool WaitForMetric(const std::string& name, double at_least) {
    return testing_util::Eventually([&] { return Metric(name) >= at_least; },
                                    absl::Seconds(20), absl::Milliseconds(20));
  }
  testing_util::Subprocess& process() { return process_; }

 private:
  testing_util::Subprocess process_;
  int metrics_port_ = 0;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<vin::v1::VinDecoderService::Stub> stub_;
};

int Done(const testing_util::BatchOutcome& out, vin::v1::Source source) {
  int n = 0;
  for (const auto& e : out.events) {
    n += e.has_done() && e.done().result().source() == source;
  }
  return n;
}

class PersistentCacheTest : public testing::Test {
 protected:
  void SetUp() override {
    auto fake = fakevpic::FakeVpic::Start();
    ASSERT_TRUE(fake.ok());
    fake_ = *std::move(fake);
    char tmpl[] = "/tmp/vin-cache-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/cache.db";
  }
  void TearDown() override {
    std::system(("rm -rf " + dir_).c_str());
  }
  std::unique_ptr<fakevpic::FakeVpic> fake_;
  std::string dir_, path_;
};

TEST_F(PersistentCacheTest, DecodesSurviveASigtermAndCostNothingAfterTheRestart) {
  constexpr int kVins = 2000;
  {
    Server first(fake_->base_url(), path_);
    const auto out = first.Feed(0, kVins);
    ASSERT_TRUE(out.status.ok()) << out.status.error_message();
    EXPECT_EQ(Done(out, vin::v1::SOURCE_VPIC), kVins);
    first.process().Signal(SIGTERM);
    ASSERT_EQ(first.process().Wait(absl::Seconds(20)), 0);
  }
  const int before = fake_->TotalVinsRequested();
  EXPECT_EQ(before, kVins);
  Server second(fake_->base_url(), path_);
  EXPECT_EQ(second.Metric("vin_cache_disk_entries"), kVins);
  const auto out = second.Feed(0, kVins);
  ASSERT_TRUE(out.status.ok());
  EXPECT_EQ(Done(out, vin::v1::SOURCE_CACHE), kVins);
  EXPECT_EQ(fake_->TotalVinsRequested(), before) << "0 upstream requests";
}

TEST_F(PersistentCacheTest, ASigkillLosesOnlyWhatWasNotCommitted) {
  constexpr int kVins = 1000;
  {
    Server first(fake_->base_url(), path_);
    ASSERT_TRUE(first.Feed(0, kVins).status.ok());
    // Committed: past the commit interval, the file holds them.
    ASSERT_TRUE(first.WaitForMetric("vin_cache_disk_entries", kVins));
    // More work in progress, then the process dies.
    fake_->ScriptEveryVin(*fakevpic::Step::ParseList("delay:200ms"));
    std::thread feed([&] { first.Feed(kVins, 3000); });
    ASSERT_TRUE(fake_->WaitForRequests(3, absl::Seconds(20)));
    first.process().Signal(SIGKILL);
    first.process().Wait(absl::Seconds(20));
    feed.join();
  }
  fake_->ScriptEveryVin({});
  const int before = fake_->TotalVinsRequested();
  Server second(fake_->base_url(), path_);
  const auto out = second.Feed(0, kVins);
  ASSERT_TRUE(out.status.ok()) << "no error after the kill";
  EXPECT_EQ(Done(out, vin::v1::SOURCE_CACHE), kVins);
  EXPECT_EQ(fake_->TotalVinsRequested(), before);
  EXPECT_EQ(second.Metric("vin_cache_disk_corrupt_total"), 0);
}

TEST_F(PersistentCacheTest, AFileThatIsNotACacheIsSetAsideAndTheServerServes) {
  {
    std::ofstream junk(path_, std::ios::binary);
    for (int i = 0; i < 4096; ++i) junk.put(static_cast<char>((i * 7919) & 0xff));
  }
  Server server(fake_->base_url(), path_);
  EXPECT_TRUE(server.process().WaitForLine(path_, absl::Seconds(5)))
      << "the log names the file";
  const auto out = server.Feed(0, 10);
  ASSERT_TRUE(out.status.ok());
  EXPECT_EQ(Done(out, vin::v1::SOURCE_VPIC), 10);
  int aside = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    aside += entry.path().filename().string().rfind("cache.db.broken", 0) == 0;
  }
  EXPECT_EQ(aside, 1) << "the bad file is kept aside";
}

TEST_F(PersistentCacheTest, ARowThatDoesNotParseIsSkippedCountedAndNeverAnswered) {
  constexpr int kVins = 10;
  {
    Server first(fake_->base_url(), path_);
    ASSERT_TRUE(first.Feed(0, kVins).status.ok());
    first.process().Signal(SIGTERM);
    ASSERT_EQ(first.process().Wait(absl::Seconds(20)), 0);
  }
  // One row's bytes replaced by a protobuf that is no decode result of its
  // VIN (a VIN "ABC", no decode time), with a matching checksum: only the
  // server's own check can tell.
  const std::string garbage("\x0a\x03" "ABC", 5);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "UPDATE entries SET value = ?1, crc = ?2, "
                               "bytes = ?3 WHERE key = ?4",
                               -1, &st, nullptr),
            SQLITE_OK);
  sqlite3_bind_blob(st, 1, garbage.data(), garbage.size(), SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 2, disk_cache::Checksum(garbage));
  sqlite3_bind_int64(st, 3, static_cast<int64_t>(garbage.size()));
  const std::string vin0 = ValidVin(0);
  sqlite3_bind_text(st, 4, vin0.c_str(), -1, SQLITE_TRANSIENT);
  ASSERT_EQ(sqlite3_step(st), SQLITE_DONE);
  ASSERT_EQ(sqlite3_changes(db), 1);
  sqlite3_finalize(st);
  sqlite3_close(db);

  const int before = fake_->TotalVinsRequested();
  Server second(fake_->base_url(), path_);
  const auto out = second.Feed(0, kVins);
  ASSERT_TRUE(out.status.ok());
  EXPECT_EQ(Done(out, vin::v1::SOURCE_CACHE), kVins - 1);
  EXPECT_EQ(Done(out, vin::v1::SOURCE_VPIC), 1) << "decoded again, live";
  for (const auto& e : out.events) {
    if (e.has_done()) EXPECT_EQ(e.done().result().vin(), e.vin());
  }
  EXPECT_EQ(fake_->TotalVinsRequested(), before + 1);
  // Counted when the writer has deleted it.
  EXPECT_TRUE(second.WaitForMetric("vin_cache_disk_corrupt_total", 1));
  EXPECT_EQ(second.Metric("vin_cache_disk_corrupt_total"), 1);
}

}  // namespace
