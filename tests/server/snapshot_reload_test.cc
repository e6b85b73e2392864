// A broken snapshot file, on the real binary: at start (garbage, or a SQLite
// file of another schema) the server says why and serves live; on SIGHUP a
// file that went bad leaves the loaded snapshot serving; the process never
// dies of it. A file that would never finish loading (a never-ending view,
// a file too big to hash in time) never holds the server: the view is
// refused by name, a reload past --snapshot_reload_timeout is abandoned,
// and SIGTERM during a reload stops the process at once.
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "fake_vpic/fake_vpic.h"
#include "gtest/gtest.h"
#include "snapshot/test_snapshot.h"
#include "testing/raw_sqlite.h"
#include "testing/subprocess.h"
#include "vin/v1/vin.grpc.pb.h"

namespace {

constexpr char kFord[] = "1FTMW1T88MFA00001";

struct Server {
  testing_util::Subprocess proc;
  std::unique_ptr<vin::v1::VinDecoderService::Stub> stub;

  bool Start(const std::string& vpic, const std::string& snapshot,
             const std::vector<std::string>& flags = {}) {
    std::vector<std::string> argv = {VIN_SERVER_BIN, "--listen=127.0.0.1:0",
                                     "--vpic_base_url=" + vpic,
                                     "--snapshot_path=" + snapshot};
    argv.insert(argv.end(), flags.begin(), flags.end());
    if (!proc.Start(argv)) return false;
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

// The file grows (sparsely) to 1 TiB: SQLite reads the same pages (its
// header says how many), but hashing it would take many minutes.
bool MakeHuge(const std::string& path) {
  return truncate(path.c_str(), int64_t{1} << 40) == 0;
}

void ExpectSnapshotAnswers(Server& s) {
  vin::v1::DecodeResponse resp;
  ASSERT_TRUE(s.Decode(vin::v1::SOURCE_PREFERENCE_SNAPSHOT_ONLY, &resp).ok());
  EXPECT_EQ(resp.result().source(), vin::v1::SOURCE_SNAPSHOT);
  EXPECT_EQ(resp.result().vehicle().make(), "FORD");
}

void ExpectCleanStop(Server& s) {
  s.proc.Signal(SIGTERM);
  EXPECT_EQ(s.proc.Wait(absl::Seconds(20)), 0);
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
  ExpectCleanStop(s);
  std::remove(garbage.c_str());
}

// A copy of the real snapshot (path_) in front of the fake vPIC.
class SnapshotCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_SNAPSHOT();
    auto fake = fakevpic::FakeVpic::Start();
    ASSERT_TRUE(fake.ok());
    fake_ = *std::move(fake);
    path_ = TempPath("vpic.db");
    std::ifstream in(snapshot::testing::SnapshotPath(), std::ios::binary);
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << in.rdbuf();
  }
  void TearDown() override {
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::remove((path_ + suffix).c_str());
    }
  }
  // Starts `s` on the copy and waits until it has loaded it; `load_time`
  // (when given) is what the server measured.
  void StartLoaded(Server& s, const std::vector<std::string>& flags = {},
                   absl::Duration* load_time = nullptr) {
    ASSERT_TRUE(s.Start(fake_->base_url(), path_, flags));
    auto line =
        s.proc.WaitForLine("offline snapshot loaded", absl::Seconds(60));
    ASSERT_TRUE(line);
    const size_t at = line->find("load_seconds=");
    ASSERT_NE(at, std::string::npos) << *line;
    if (load_time != nullptr) {
      *load_time = absl::Seconds(std::stod(line->substr(at + 13)));
    }
  }

  std::unique_ptr<fakevpic::FakeVpic> fake_;
  std::string path_;
};

TEST_F(SnapshotCopyTest, AFileThatWentBadOnSighupLeavesTheLoadedOneServing) {
  Server s;
  StartLoaded(s);
  // The file is replaced by a truncated copy of itself, then by a file of
  // another schema; each SIGHUP fails with a clear error and changes nothing.
  for (const std::string& bad :
       {std::string("SQLite format 3\0", 16) + std::string(100, '\0'),
        std::string("not a database at all")}) {
    Write(path_, bad);
    s.proc.Signal(SIGHUP);
    ASSERT_TRUE(s.proc.WaitForLine("snapshot reload failed, keeping the current one",
                                   absl::Seconds(30)));
    ExpectSnapshotAnswers(s);
  }
  ExpectCleanStop(s);
}

// Rule 21: with --snapshot_sha256, a file with another hash is refused,
// naming both hashes, at start (the server serves live) and on SIGHUP (the
// loaded one stays).
TEST_F(SnapshotCopyTest, AFileThatIsNotThePinnedOneIsRefused) {
  // The hash of the file the copy was made from.
  const std::string pinned = snapshot::testing::SharedSnapshot()->info().sha256;
  ASSERT_EQ(pinned.size(), 64u);
  Server s;
  StartLoaded(s, {"--snapshot_sha256=" + pinned});
  // One make renamed: another file.
  testing_util::RawExec(
      path_, "UPDATE Make SET Name = 'Not Ford' WHERE upper(Name) = 'FORD'");
  s.proc.Signal(SIGHUP);
  ASSERT_TRUE(s.proc.WaitForLine("not the pinned --snapshot_sha256 " + pinned,
                                 absl::Seconds(30)))
      << absl::StrJoin(s.proc.lines(), "\n");
  ExpectSnapshotAnswers(s);
  ExpectCleanStop(s);

  Server other;
  ASSERT_TRUE(
      other.Start(fake_->base_url(), path_, {"--snapshot_sha256=" + pinned}));
  EXPECT_TRUE(other.proc.WaitForLine(
      "starting without the offline snapshot.*not the pinned",
      absl::Seconds(30)));
  vin::v1::DecodeResponse resp;
  EXPECT_EQ(other.Decode(vin::v1::SOURCE_PREFERENCE_SNAPSHOT_ONLY, &resp)
                .error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  ExpectCleanStop(other);
}

// The pinned bytes with a -wal beside them holding a change (SQLite reads
// it; the hash does not cover it): refused too.
TEST_F(SnapshotCopyTest, APinnedFileWithChangesInItsWalIsRefused) {
  const std::string pinned = snapshot::testing::SharedSnapshot()->info().sha256;
  // A second copy takes a change in WAL mode; its -wal, copied while the
  // change is not yet checkpointed, goes beside the untouched copy.
  const std::string other = TempPath("other.db");
  {
    std::ifstream in(path_, std::ios::binary);
    std::ofstream out(other, std::ios::binary | std::ios::trunc);
    out << in.rdbuf();
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(other.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;"
                         " UPDATE Make SET Name = 'Not Ford'"
                         " WHERE upper(Name) = 'FORD'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  {
    std::ifstream in(other + "-wal", std::ios::binary);
    std::ofstream out(path_ + "-wal", std::ios::binary | std::ios::trunc);
    out << in.rdbuf();
  }
  sqlite3_close(db);
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::remove((other + suffix).c_str());
  }
  Server s;
  ASSERT_TRUE(
      s.Start(fake_->base_url(), path_, {"--snapshot_sha256=" + pinned}));
  EXPECT_TRUE(s.proc.WaitForLine("starting without the offline snapshot.*-wal",
                                 absl::Seconds(30)))
      << absl::StrJoin(s.proc.lines(), "\n");
  ExpectCleanStop(s);
}

// Rule 21: a reloaded snapshot whose makes were shuffled decodes the golden
// set built into the binary worse than the one in use: refused, the loaded
// one stays; an unchanged copy reloads.
TEST_F(SnapshotCopyTest, ASnapshotThatFailsTheGoldenSetIsRefused) {
  Server s;
  StartLoaded(s);
  // Each make takes the name of the next one (by id).
  testing_util::RawExec(
      path_,
      "UPDATE Make SET Name = COALESCE((SELECT m.Name FROM Make m WHERE m.Id > "
      "Make.Id ORDER BY m.Id LIMIT 1), Name)");
  s.proc.Signal(SIGHUP);
  ASSERT_TRUE(s.proc.WaitForLine("golden VINs.*refused", absl::Seconds(60)));
  ExpectSnapshotAnswers(s);
  ExpectCleanStop(s);
}

// One of the tables the loader reads (Manufacturer, read in full) becomes
// a view that never ends: the schema check refuses the file, naming the
// view, at once; at start too.
TEST_F(SnapshotCopyTest, ANeverEndingViewIsRefusedByName) {
  {
    Server s;
    StartLoaded(s);
    ASSERT_EQ(testing_util::RawExec(
                  path_,
                  "DROP TABLE Manufacturer; CREATE VIEW Manufacturer AS "
                  "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL "
                  "SELECT i + 1 FROM n) SELECT i AS Id, 'X' AS Name FROM n"),
              "");
    s.proc.Signal(SIGHUP);
    EXPECT_TRUE(s.proc.WaitForLine(
        R"(snapshot reload failed, keeping the current one.*view \\"Manufacturer\\")",
        absl::Seconds(30)));
    ExpectSnapshotAnswers(s);
    ExpectCleanStop(s);
  }
  Server s;
  ASSERT_TRUE(s.Start(fake_->base_url(), path_));
  EXPECT_TRUE(s.proc.WaitForLine(
      R"(starting without the offline snapshot.*view \\"Manufacturer\\")",
      absl::Seconds(5)));
  ExpectCleanStop(s);
}

// The file's tables are real, but its load cannot end in time: the reload
// is abandoned at --snapshot_reload_timeout, logged, and the loaded
// snapshot keeps answering.
TEST_F(SnapshotCopyTest, AReloadPastTheTimeoutIsAbandoned) {
  // The load at start must fit in the timeout, in this build (0.5 s in
  // RelWithDebInfo, about 10 s under TSan): four times what it takes here,
  // whole seconds, at least 2 s. Hashing 1 TiB takes far longer.
  absl::Duration timeout;
  {
    Server first;
    absl::Duration load;
    StartLoaded(first, {}, &load);
    ExpectCleanStop(first);
    timeout =
        std::max(absl::Seconds(2),
                 absl::Seconds(std::ceil(4 * absl::ToDoubleSeconds(load))));
  }
  const std::string seconds = absl::FormatDuration(timeout);
  Server s;
  StartLoaded(s, {"--snapshot_reload_timeout=" + seconds});
  ASSERT_TRUE(MakeHuge(path_));
  s.proc.Signal(SIGHUP);
  EXPECT_TRUE(s.proc.WaitForLine(
      "snapshot reload abandoned: past --snapshot_reload_timeout.*time "
      "limit of " +
          seconds,
      timeout + absl::Seconds(30)));
  ExpectSnapshotAnswers(s);
  ExpectCleanStop(s);
}

// SIGTERM while a reload runs (one that would take many minutes): the
// reload is cancelled and the process exits 0 within the usual bound.
TEST_F(SnapshotCopyTest, SigtermDuringASlowReloadStopsTheProcess) {
  Server s;
  StartLoaded(s);
  ASSERT_TRUE(MakeHuge(path_));
  s.proc.Signal(SIGHUP);
  ASSERT_TRUE(
      s.proc.WaitForLine("SIGHUP received: reloading", absl::Seconds(10)));
  ExpectSnapshotAnswers(s);  // the reload runs; decodes go on
  ExpectCleanStop(s);
  EXPECT_TRUE(s.proc.WaitForLine(
      "snapshot reload cancelled: the server is stopping", absl::Seconds(1)));
}

}  // namespace
