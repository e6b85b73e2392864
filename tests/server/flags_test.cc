// vin-server's flags as a person at a terminal meets them: a wrong value is
// a usage error (exit 2) that names the flag and what it takes.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/redis_server.h"
#include "testing/subprocess.h"

namespace {

using testing::HasSubstr;

// Runs vin-server with `flags`; returns its exit status and first line.
std::pair<absl::optional<int>, std::string> RunServer(
    const std::vector<std::string>& flags) {
  testing_util::Subprocess server;
  std::vector<std::string> argv = {VIN_SERVER_BIN, "--listen=127.0.0.1:0"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  EXPECT_TRUE(server.Start(argv));
  auto line = server.WaitForLine("vin-server:|listening on", absl::Seconds(20));
  if (line && line->find("listening on") != std::string::npos) {
    server.Signal(SIGTERM);
  }
  return {server.Wait(absl::Seconds(20)), line.value_or("")};
}

// README "Configuration": VIN_<FLAG> variables and --flagfile, the
// command line winning over the environment.
TEST(FlagSources, TheEnvironmentAndAFlagFileSetFlags) {
  const auto run = [](std::vector<std::string> argv) {
    testing_util::Subprocess server;
    EXPECT_TRUE(server.Start(argv));
    auto line =
        server.WaitForLine("vin-server:|listening on", absl::Seconds(20));
    if (line && line->find("listening on") != std::string::npos) {
      server.Signal(SIGTERM);
    }
    return std::make_pair(server.Wait(absl::Seconds(20)), line.value_or(""));
  };
  auto [status, line] =
      run({"/usr/bin/env", "VIN_SOURCE_PREFERENCE=bogus", "VIN_NOT_A_FLAG=1",
           VIN_SERVER_BIN, "--listen=127.0.0.1:0"});
  EXPECT_EQ(status, 2);
  EXPECT_THAT(line, HasSubstr("--source_preference must be"))
      << "read from VIN_";
  std::tie(status, line) =
      run({"/usr/bin/env", "VIN_SOURCE_PREFERENCE=bogus", VIN_SERVER_BIN,
           "--listen=127.0.0.1:0", "--source_preference=live_only"});
  EXPECT_THAT(line, HasSubstr("listening on")) << "the command line wins";
  EXPECT_EQ(status, 0);
  const std::string file = testing::TempDir() + "/vin-server.flags";
  FILE* f = fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("# a comment\n--listen=127.0.0.1:0\n--source_preference=bogus\n", f);
  fclose(f);
  std::tie(status, line) =
      run({VIN_SERVER_BIN, absl::StrCat("--flagfile=", file)});
  EXPECT_EQ(status, 2);
  EXPECT_THAT(line, HasSubstr("--source_preference must be"))
      << "read from the file";
}

TEST(SourcePreferenceFlag, EveryNameOfTheProtosEnumIsAccepted) {
  for (const char* value :
       {"auto", "live_only", "snapshot_only", "live_then_snapshot"}) {
    auto [status, line] = RunServer({absl::StrCat("--source_preference=", value)});
    EXPECT_THAT(line, HasSubstr("listening on")) << value;
    EXPECT_EQ(status, 0) << value;
  }
}

TEST(SourcePreferenceFlag, AnythingElseIsAUsageErrorNamingTheChoices) {
  for (const char* value : {"bogus", "LIVE_ONLY", "unspecified", ""}) {
    auto [status, line] = RunServer({absl::StrCat("--source_preference=", value)});
    EXPECT_EQ(status, 2) << value;
    EXPECT_THAT(line, HasSubstr("--source_preference must be auto, live_only"))
        << value;
  }
}

// Fleet mode's wait for Redis at start (DESIGN rule 16): any duration of 0
// or more; the replica exits 0 on SIGTERM while it waits (nothing listens
// on the Redis port).
TEST(RedisConnectTimeoutFlag, ADurationOfZeroOrMoreIsAccepted) {
  const std::string redis =
      absl::StrCat("--redis_url=redis://127.0.0.1:", testing_util::FreePort());
  for (const char* value : {"0", "300ms", "2s", "1m"}) {
    auto [status, line] =
        RunServer({redis, absl::StrCat("--redis_connect_timeout=", value)});
    EXPECT_THAT(line, HasSubstr("listening on")) << value;
    EXPECT_EQ(status, 0) << value;
  }
}

TEST(RedisConnectTimeoutFlag, ANegativeOneIsAUsageError) {
  auto [status, line] = RunServer({"--redis_url=redis://127.0.0.1:1",
                                   "--redis_connect_timeout=-1s"});
  EXPECT_EQ(status, 2);
  EXPECT_THAT(line, HasSubstr("--redis_connect_timeout must be a duration of 0 "
                              "or more (e.g. 2s, 300ms), got -1s"));
}

// Fleet mode's credentials and TLS (README "Securing the fleet's Redis"):
// what does not go together, or cannot be used, is a usage error naming
// it, and never shows a password.
TEST(RedisFlags, BadCombinationsAreUsageErrorsNamingTheProblem) {
  const std::string file = absl::StrCat("/tmp/vin-flags-secret-", getpid());
  FILE* f = fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("s3cretpw\n", f);
  fclose(f);
  struct Case {
    std::vector<std::string> flags;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {{"--redis_url=redis://vin:s3cretpw@127.0.0.1:1",
             "--redis_password_file=" + file},
            "--redis_password_file gives one too"},
           {{"--redis_url=redis://vin@127.0.0.1:1"}, "but no password"},
           {{"--redis_url=redis://vin:s3cretpw@127.0.0.1:99999"}, "bad port"},
           {{"--redis_url=redis://vin:s3cret%zz@127.0.0.1:1"},
            "bad percent-escape in the password"},
           {{"--redis_url=redis://127.0.0.1:1", "--redis_tls_ca_file=" + file},
            "need a rediss:// --redis_url"},
           {{"--redis_url=rediss://127.0.0.1:1", "--redis_tls_ca_file=" + file},
            "cannot use --redis_tls_ca_file"},
           // A device that never ends: refused by name, never read.
           {{"--redis_url=rediss://127.0.0.1:1",
             "--redis_tls_ca_file=/dev/zero"},
            "--redis_tls_ca_file file /dev/zero is not a regular file"},
           {{"--redis_url=rediss://127.0.0.1:1",
             "--redis_tls_cert_file=" + file},
            "go together"},
           {{"--redis_url=redis://127.0.0.1:1", "--fleet_secret_file=" + file},
            "needs at least 16"},
       }) {
    auto [status, line] = RunServer(c.flags);
    EXPECT_EQ(status, 2) << absl::StrJoin(c.flags, " ");
    EXPECT_THAT(line, HasSubstr(c.says)) << absl::StrJoin(c.flags, " ");
    EXPECT_THAT(line, testing::Not(HasSubstr("s3cret")));
  }
  std::remove(file.c_str());
}

// The URL is logged, its password is not.
TEST(RedisFlags, TheUrlIsLoggedWithoutItsPassword) {
  testing_util::Subprocess server;
  ASSERT_TRUE(server.Start(
      {VIN_SERVER_BIN, "--listen=127.0.0.1:0", "--redis_connect_timeout=0",
       absl::StrCat("--redis_url=redis://vin:s3cretpw@127.0.0.1:",
                    testing_util::FreePort())}));
  auto line = server.WaitForLine("fleet mode", absl::Seconds(20));
  ASSERT_TRUE(line.has_value());
  EXPECT_THAT(*line, HasSubstr("redis=redis://vin:***@127.0.0.1:"));
  ASSERT_TRUE(server.WaitForLine("listening on", absl::Seconds(20)));
  server.Signal(SIGTERM);
  EXPECT_EQ(server.Wait(absl::Seconds(20)), 0);
  for (const std::string& l : server.lines()) {
    EXPECT_THAT(l, testing::Not(HasSubstr("s3cret"))) << l;
  }
}

// Rule 17's flags: NHTSA's hours by default; a bad value is a usage error
// naming what is wrong.
TEST(FairShareFlags, GoodValuesStartTheServer) {
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{},
        {"--peak_hours=none"},
        {"--peak_hours=Sat-Sun 00:00-24:00 Europe/Berlin", "--bulk_peak_share=1"},
        {"--tenant_weights=acme:2,beta:0.5", "--bulk_min_share=0"}}) {
    auto [status, line] = RunServer(flags);
    EXPECT_THAT(line, HasSubstr("listening on")) << absl::StrJoin(flags, " ");
    EXPECT_EQ(status, 0) << absl::StrJoin(flags, " ");
  }
}

TEST(FairShareFlags, BadValuesAreUsageErrorsNamingTheProblem) {
  struct Case {
    std::string flag;
    std::string says;
  };
  for (const Case& c : {
           Case{"--peak_hours=Mon-Fri 06:00-18:00 Atlantis/Capital",
                "unknown time zone \"Atlantis/Capital\""},
           Case{"--peak_hours=weekdays", "three parts"},
           Case{"--bulk_min_share=1.5", "--bulk_min_share must be between 0 and 1"},
           Case{"--bulk_peak_share=0", "--bulk_peak_share must be above 0"},
           Case{"--tenant_weights=acme", "\"acme\" is not name:weight"},
       }) {
    auto [status, line] = RunServer({c.flag});
    EXPECT_EQ(status, 2) << c.flag;
    EXPECT_THAT(line, HasSubstr(c.says)) << c.flag;
  }
}

// The HTTP gateway's flags: a request deadline above 0, at least one
// thread, host:port with an IP address.
TEST(HttpGatewayFlags, GoodValuesStartTheGateway) {
  auto [status, line] =
      RunServer({"--http_listen=127.0.0.1:0", "--http_deadline=2s",
                 "--http_threads=1", "--http_cors_origins=https://a.example,*"});
  EXPECT_THAT(line, HasSubstr("listening on"));
  EXPECT_EQ(status, 0);
}

TEST(HttpGatewayFlags, BadValuesAreClearErrors) {
  struct Case {
    std::vector<std::string> flags;
    const char* says;
    int exit;
  };
  for (const Case& c : std::vector<Case>{
           {{"--http_listen=127.0.0.1:0", "--http_deadline=0s"},
            "--http_deadline must be a duration above 0 (e.g. 30s), got 0", 2},
           {{"--http_listen=127.0.0.1:0", "--http_deadline=-5s"},
            "--http_deadline must be a duration above 0 (e.g. 30s), got -5s", 2},
           {{"--http_listen=127.0.0.1:0", "--http_threads=0"},
            "--http_threads must be at least 1, got 0", 2},
           {{"--http_listen=8080"}, "--http_listen must be host:port, got \"8080\"", 2},
           {{"--http_listen=localhost:0"},
            "--http_listen: \"localhost\" is not an IP address", 2},
           {{"--http_listen=127.0.0.1:0", "--fd_reserve=-2"},
            "--fd_reserve must be -1 (a quarter of the file limit) or at least "
            "0, got -2",
            2},
       }) {
    auto [status, line] = RunServer(c.flags);
    EXPECT_EQ(status, c.exit) << absl::StrJoin(c.flags, " ");
    EXPECT_THAT(line, HasSubstr(c.says)) << absl::StrJoin(c.flags, " ");
  }
}

}  // namespace
