// SourcePreference through real gRPC: the offline snapshot as the explicit
// choice (SNAPSHOT_ONLY) and as the labelled fallback (LIVE_THEN_SNAPSHOT).
#include <atomic>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "snapshot/test_snapshot.h"
#include "testing/batch_session.h"
#include "testing/server_fixture.h"
#include "testing/vin_gen.h"

namespace {

using testing::HasSubstr;
using testing_util::Item;
using testing_util::RunBatch;
using vin::v1::DecodeRequest;
using vin::v1::DecodeResponse;

constexpr char kFord[] = "1FTMW1T88MFA00001";

bool HasNote(const vin::v1::DecodeResult& r, const std::string& code) {
  for (const auto& n : r.notes()) {
    if (n.code() == code) return true;
  }
  return false;
}

class SourcePreferenceTest : public testing_util::ServerFixture {
 protected:
  void StartWithSnapshot(server::ServerOptions o = Defaults()) {
    o.snapshot_path = snapshot::testing::SnapshotPath();
    StartServer(o);
    ASSERT_NE(server_->snapshot(), nullptr) << server_->snapshot_status();
  }
  grpc::Status DecodeWith(const std::string& vin,
                          vin::v1::SourcePreference source,
                          DecodeResponse* resp,
                          absl::Duration timeout = absl::Seconds(30)) {
    DecodeRequest req;
    req.set_vin(vin);
    req.set_source_preference(source);
    return Decode(req, resp, timeout);
  }
};

TEST_F(SourcePreferenceTest, SnapshotOnlyNeverAsksVpic) {
  SKIP_WITHOUT_SNAPSHOT();
  StartWithSnapshot();
  DecodeResponse resp;
  ASSERT_TRUE(
      DecodeWith(kFord, vin::v1::SOURCE_PREFERENCE_SNAPSHOT_ONLY, &resp).ok());
  const auto& r = resp.result();
  EXPECT_EQ(r.source(), vin::v1::SOURCE_SNAPSHOT);
  EXPECT_EQ(r.vehicle().make(), "FORD");
  EXPECT_EQ(r.vehicle().model(), "F-150");
  EXPECT_EQ(r.vehicle().model_year(), 2021);
  EXPECT_EQ(r.attempts(), 0);
  EXPECT_EQ(r.vehicle().trim(), "") << "the snapshot has no trim: not provided";
  EXPECT_TRUE(HasNote(r, "snapshot")) << "the snapshot date and sha256";
  EXPECT_EQ(fake_->TotalRequests(), 0);
}

TEST_F(SourcePreferenceTest, LiveThenSnapshotAnswersFromVpicWhenHealthy) {
  SKIP_WITHOUT_SNAPSHOT();
  StartWithSnapshot();
  DecodeResponse resp;
  ASSERT_TRUE(DecodeWith(kFord, vin::v1::SOURCE_PREFERENCE_LIVE_THEN_SNAPSHOT,
                         &resp)
                  .ok());
  EXPECT_EQ(resp.result().source(), vin::v1::SOURCE_VPIC);
  EXPECT_EQ(resp.result().vehicle().trim(), "SuperCrew-SSV");
  EXPECT_EQ(fake_->TotalRequests(), 1);
}

TEST_F(SourcePreferenceTest, LiveThenSnapshotFallsBackAfterTheRetries) {
  SKIP_WITHOUT_SNAPSHOT();
  server::ServerOptions o = Defaults();
  o.engine.max_attempts = 3;
  StartWithSnapshot(o);
  Script(kFord, "503,503,503");
  DecodeResponse resp;
  ASSERT_TRUE(DecodeWith(kFord, vin::v1::SOURCE_PREFERENCE_LIVE_THEN_SNAPSHOT,
                         &resp)
                  .ok());
  const auto& r = resp.result();
  EXPECT_EQ(r.source(), vin::v1::SOURCE_SNAPSHOT);
  EXPECT_EQ(r.vehicle().model(), "F-150");
  EXPECT_EQ(r.attempts(), 3) << "the live attempts behind it";
  ASSERT_TRUE(HasNote(r, "live_failure"));
  EXPECT_EQ(fake_->RequestCount(kFord), 3);
  // Snapshot answers are not cached: the next request goes live again.
  DecodeResponse again;
  ASSERT_TRUE(DecodeWith(kFord, vin::v1::SOURCE_PREFERENCE_LIVE_THEN_SNAPSHOT,
                         &again)
                  .ok());
  EXPECT_EQ(again.result().source(), vin::v1::SOURCE_VPIC);
  EXPECT_EQ(fake_->RequestCount(kFord), 4);
}

TEST_F(SourcePreferenceTest, DefaultWithASnapshotIsLiveThenSnapshot) {
  SKIP_WITHOUT_SNAPSHOT();
  server::ServerOptions o = Defaults();
  o.engine.max_attempts = 2;
  StartWithSnapshot(o);
  Script(kFord, "404");
  DecodeResponse resp;
  ASSERT_TRUE(Decode(kFord, &resp).ok());
  EXPECT_EQ(resp.result().source(), vin::v1::SOURCE_SNAPSHOT);
  EXPECT_TRUE(HasNote(resp.result(), "live_failure"));
}

TEST_F(SourcePreferenceTest, LiveOnlyNeverFallsBack) {
  SKIP_WITHOUT_SNAPSHOT();
  server::ServerOptions o = Defaults();
  o.engine.max_attempts = 2;
  StartWithSnapshot(o);
  Script(kFord, "503,503");
  DecodeResponse resp;
  grpc::Status s =
      DecodeWith(kFord, vin::v1::SOURCE_PREFERENCE_LIVE_ONLY, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(SourcePreferenceTest, NearTheDeadlineTheSnapshotAnswersInTime) {
  SKIP_WITHOUT_SNAPSHOT();
  StartWithSnapshot();
  Script(kFord, "hang");
  DecodeResponse resp;
  grpc::Status s = DecodeWith(
      kFord, vin::v1::SOURCE_PREFERENCE_LIVE_THEN_SNAPSHOT, &resp,
      absl::Seconds(1));
  ASSERT_TRUE(s.ok()) << s.error_code() << " " << s.error_message();
  EXPECT_EQ(resp.result().source(), vin::v1::SOURCE_SNAPSHOT);
  EXPECT_TRUE(HasNote(resp.result(), "live_failure"));
}

TEST_F(SourcePreferenceTest, BatchItemRetriesThenIsDoneFromTheSnapshot) {
  SKIP_WITHOUT_SNAPSHOT();
  server::ServerOptions o = Defaults();
  o.engine.max_attempts = 3;
  StartWithSnapshot(o);
  Script(kFord, "503,503,503");
  auto item = Item(kFord, "truck");
  item.set_source_preference(vin::v1::SOURCE_PREFERENCE_LIVE_THEN_SNAPSHOT);
  auto out = RunBatch(stub_.get(), {item});
  ASSERT_TRUE(out.status.ok());
  ASSERT_EQ(out.events.size(), 4u);
  EXPECT_TRUE(out.events[0].has_queued());
  EXPECT_TRUE(out.events[1].has_retrying());
  EXPECT_TRUE(out.events[2].has_retrying());
  ASSERT_TRUE(out.events[3].has_done());
  EXPECT_EQ(out.events[3].done().result().source(), vin::v1::SOURCE_SNAPSHOT);
}

TEST_F(SourcePreferenceTest, ReloadDuringABatchFailsNoItem) {
  SKIP_WITHOUT_SNAPSHOT();
  StartWithSnapshot();
  const auto before = server_->snapshot();
  std::vector<vin::v1::DecodeBatchRequest> requests;
  for (int i = 0; i < 3000; ++i) {
    auto r = Item(i % 2 ? kFord : testing_util::ValidVin(i));
    r.set_source_preference(vin::v1::SOURCE_PREFERENCE_SNAPSHOT_ONLY);
    requests.push_back(r);
  }
  std::atomic<int> done_seen{0};
  std::thread reloader;
  auto out = RunBatch(stub_.get(), requests,
                      [&](const vin::v1::DecodeBatchResponse& e) {
                        if (e.has_done() && ++done_seen == 500) {
                          reloader = std::thread([&] {
                            EXPECT_TRUE(server_->ReloadSnapshot().ok());
                          });
                        }
                      });
  reloader.join();
  ASSERT_TRUE(out.status.ok());
  int done = 0, failed = 0;
  for (const auto& e : out.events) {
    done += e.has_done();
    failed += e.has_failed();
  }
  EXPECT_EQ(done, 3000);
  EXPECT_EQ(failed, 0);
  EXPECT_NE(server_->snapshot(), before) << "a new snapshot was swapped in";
  EXPECT_EQ(fake_->TotalRequests(), 0);
}

}  // namespace
