// A broken snapshot file, on the real binary: at start (garbage, or a SQLite
// file of another schema) the server says why and serves live; on SIGHUP a
// file that went bad leaves the loaded snapshot serving; the process never
// dies of it.
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include "absl/strings/str_cat.h"
#include "fake_vpic/fake_vpic.h"
#include "gtest/gtest.h"
#include "snapshot/test_snapshot.h"
#include "testing/subprocess.h"
#include "vin/v1/vin.grpc.pb.h"

namespace {

constexpr char kFord[] = "1FTMW1T88MFA00001";

struct Server {
  testing_util::Subprocess proc;
  std::unique_ptr<vin::v1::VinDecoderService::Stub> stub;

  bool Start(const std::string& vpic, const std::string& snapshot) {
    if (!proc.Start({VIN_SERVER_BIN, "--listen=127.0.0.1:0",
                     "--vpic_base_url=" + vpic, "--snapshot_path=" + snapshot})) {
      return false;
    }
    auto line = proc.WaitForLine("listening on", absl::Seconds(60));
    if (!line) return false;
    const int port = std::stoi(line->substr(line->find("(port ") + 6));
    stub = vin::v1::VinDecoderService::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
    return true;
  }
  grpc::Status Decode(vin::v1::SourcePreference source,
                      vin::v1::DecodeResponse* out) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
    vin::v1::DecodeRequest req;
    req.set_vin(kFord);
    req.set_source_preference(source);
    return stub->Decode(&ctx, req, out);
  }
};

std::string TempPath(const std::string& name) {
  return absl::StrCat(testing::TempDir(), "/", name, "-", getpid());
}

void Write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(SnapshotFileTest, AGarbageOrForeignFileAtStartIsNamedAndLiveServes) {
  auto fake = fakevpic::FakeVpic::Start();
  ASSERT_TRUE(fake.ok());
  const std::string garbage = TempPath("garbage.db");
  Write(garbage, std::string("SQLite format 3\0", 16) + std::string(4000, '\x7f'));
  Server s;
  ASSERT_TRUE(s.Start((*fake)->base_url(), garbage));
  EXPECT_TRUE(s.proc.WaitForLine("starting without the offline snapshot.*garbage",
                                 absl::Seconds(5)));
  vin::v1::DecodeResponse resp;
  ASSERT_TRUE(s.Decode(vin::v1::SOURCE_PREFERENCE_LIVE_ONLY, &resp).ok());
  EXPECT_EQ(resp.result().source(), vin::v1::SOURCE_VPIC);
  EXPECT_EQ(s.Decode(vin::v1::SOURCE_PREFERENCE_SNAPSHOT_ONLY, &resp).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  s.proc.Signal(SIGTERM);
  EXPECT_EQ(s.proc.Wait(absl::Seconds(20)), 0);
  std::remove(garbage.c_str());
}

TEST(SnapshotFileTest, AFileThatWentBadOnSighupLeavesTheLoadedOneServing) {
  SKIP_WITHOUT_SNAPSHOT();
  auto fake = fakevpic::FakeVpic::Start();
  ASSERT_TRUE(fake.ok());
  const std::string path = TempPath("vpic.db");
  {
    std::ifstream in(snapshot::testing::SnapshotPath(), std::ios::binary);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << in.rdbuf();
  }
  Server s;
  ASSERT_TRUE(s.Start((*fake)->base_url(), path));
  ASSERT_TRUE(s.proc.WaitForLine("offline snapshot loaded", absl::Seconds(60)));
  // The file is replaced by a truncated copy of itself, then by a file of
  // another schema; each SIGHUP fails with a clear error and changes nothing.
  for (const std::string& bad :
       {std::string("SQLite format 3\0", 16) + std::string(100, '\0'),
        std::string("not a database at all")}) {
    Write(path, bad);
    s.proc.Signal(SIGHUP);
    ASSERT_TRUE(s.proc.WaitForLine("snapshot reload failed, keeping the current one",
                                   absl::Seconds(30)));
    vin::v1::DecodeResponse resp;
    ASSERT_TRUE(s.Decode(vin::v1::SOURCE_PREFERENCE_SNAPSHOT_ONLY, &resp).ok());
    EXPECT_EQ(resp.result().source(), vin::v1::SOURCE_SNAPSHOT);
    EXPECT_EQ(resp.result().vehicle().make(), "FORD");
  }
  s.proc.Signal(SIGTERM);
  EXPECT_EQ(s.proc.Wait(absl::Seconds(20)), 0);
  std::remove(path.c_str());
}

}  // namespace
