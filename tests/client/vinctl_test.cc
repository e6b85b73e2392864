// The vinctl binary: exit statuses and messages of its command line, and its
// flags reaching the commands (an unreachable server, files of --in/--out).
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/subprocess.h"

namespace {

using testing::AllOf;
using testing::HasSubstr;

constexpr char kFord[] = "1FTMW1T88MFA00001";
// Nothing listens on port 1 of the loopback: connections are refused.
constexpr char kNoServer[] = "--server=127.0.0.1:1";

struct VinctlRun {
  absl::optional<int> exit;
  std::string output;  // stdout and stderr, interleaved
};

VinctlRun Vinctl(std::vector<std::string> args) {
  args.insert(args.begin(), VINCTL_BIN);
  testing_util::Subprocess vinctl;
  if (!vinctl.Start(args)) {
    ADD_FAILURE() << "cannot start " << VINCTL_BIN;
    return {};
  }
  VinctlRun run;
  run.exit = vinctl.Wait(absl::Seconds(30));
  run.output = absl::StrJoin(vinctl.LinesAtEnd(absl::Seconds(10)), "\n");
  return run;
}

TEST(Vinctl, HelpExitsZero) {
  const VinctlRun run = Vinctl({"--help"});
  EXPECT_EQ(run.exit, 0) << run.output;
  EXPECT_THAT(run.output, AllOf(HasSubstr("Usage: vinctl [OPTIONS] COMMAND"),
                                HasSubstr("decode"), HasSubstr("batch"),
                                HasSubstr("Exit status:")));
}

TEST(Vinctl, BatchHelpListsFlagsAndExitsZero) {
  const VinctlRun run = Vinctl({"batch", "--help"});
  EXPECT_EQ(run.exit, 0) << run.output;
  EXPECT_THAT(
      run.output,
      AllOf(HasSubstr("Usage: vinctl batch [OPTIONS]"),
            HasSubstr("--in FILE=-"), HasSubstr("--window N=512"),
            HasSubstr("--stagger DUR=0"), HasSubstr("--deadline DUR=0")));
}

TEST(Vinctl, UnknownFlagExitsTwoNamingIt) {
  const VinctlRun run = Vinctl({"batch", "--colour=red"});
  EXPECT_EQ(run.exit, 2) << run.output;
  EXPECT_THAT(run.output,
              AllOf(HasSubstr("vinctl: "), HasSubstr("--colour=red"),
                    HasSubstr("Try 'vinctl batch --help'.")));
}

TEST(Vinctl, BadDurationExitsTwoNamingIt) {
  const VinctlRun run = Vinctl({"batch", "--stagger=5 minutes"});
  EXPECT_EQ(run.exit, 2) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("vinctl: --stagger: '5 minutes' is not a duration"));
}

TEST(Vinctl, ModelYearOutOfRangeExitsTwoNamingTheRange) {
  const VinctlRun run =
      Vinctl({"decode", kFord, "--model-year=1900", kNoServer});
  EXPECT_EQ(run.exit, 2) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("vinctl: --model-year must be 0 (no hint) or between "
                        "1980 and 2100, got 1900"));
}

TEST(Vinctl, MissingCommandExitsTwo) {
  const VinctlRun run = Vinctl({});
  EXPECT_EQ(run.exit, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("vinctl: a command is needed"));
}

TEST(Vinctl, DecodeThatCannotConnectExitsOne) {
  const VinctlRun run = Vinctl({"decode", kFord, kNoServer, "--deadline", "5s",
                                "--model_year=2021", "--json"});
  EXPECT_EQ(run.exit, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("vinctl: UNAVAILABLE: "));
}

class VinctlFiles : public testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/vinctl-test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    for (const char* f : {"/feed.csv", "/out.csv"}) unlink((dir_ + f).c_str());
    rmdir(dir_.c_str());
  }
  std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  std::string dir_;
};

TEST_F(VinctlFiles, BatchReadsInAndWritesOut) {
  const std::string feed = dir_ + "/feed.csv";
  const std::string out = dir_ + "/out.csv";
  std::ofstream(feed) << "stock,VIN\nA1," << kFord << "\n";
  // The stream cannot start: the record read is written as STREAM_ENDED.
  const VinctlRun run =
      Vinctl({"batch", "--in", feed, "--out=" + out, kNoServer, "--format=csv",
              "--window=4", "--deadline=10s"});
  EXPECT_EQ(run.exit, 2) << run.output;
  const std::string written = Read(out);
  EXPECT_THAT(written, HasSubstr("stock,VIN,status,"));
  EXPECT_THAT(written, HasSubstr(std::string("A1,") + kFord + ",failed,"));
  EXPECT_THAT(written, HasSubstr("STREAM_ENDED"));
}

TEST_F(VinctlFiles, BatchInputThatCannotBeReadExitsTwo) {
  const VinctlRun run =
      Vinctl({"batch", "--in=" + dir_ + "/missing.csv", kNoServer});
  EXPECT_EQ(run.exit, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("vinctl: cannot read " + dir_ +
                                    "/missing.csv: No such file or directory"));
}

}  // namespace
