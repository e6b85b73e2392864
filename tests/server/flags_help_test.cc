// vin-server --help as a person at a terminal reads it: the server's own
// flags by concern, each group under a title, every flag once and the same
// ones README "Server flags" lists; --helpfull adds abseil's.
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/subprocess.h"

namespace {

using testing::HasSubstr;

// What --help and --helpfull print, one entry per line.
std::vector<std::string> Output(const std::string& flag) {
  testing_util::Subprocess server;
  EXPECT_TRUE(server.Start({VIN_SERVER_BIN, flag}));
  std::vector<std::string> lines = server.LinesAtEnd(absl::Seconds(20));
  EXPECT_TRUE(server.Wait(absl::Seconds(20)).has_value()) << flag;
  return lines;
}

// The help's groups: each "Flags from <title>:" with the flags under it,
// the titles in the order printed, and how many times each title and each
// flag appear.
struct Help {
  std::map<std::string, std::vector<std::string>> groups;
  std::vector<std::string> titles;
  std::map<std::string, int> titles_seen;
  std::map<std::string, int> flags_seen;
};

Help Parse(const std::vector<std::string>& lines) {
  static const std::regex kHeader("^  Flags from (.*):$");
  static const std::regex kFlag("^    --([a-z0-9_]+) \\(");
  Help help;
  std::string title;
  for (const std::string& line : lines) {
    std::smatch m;
    if (std::regex_match(line, m, kHeader)) {
      title = m[1];
      help.titles.push_back(title);
      ++help.titles_seen[title];
    } else if (std::regex_search(line, m, kFlag)) {
      help.groups[title].push_back(m[1]);
      ++help.flags_seen[m[1]];
    }
  }
  return help;
}

// The groups and some of the flags of each (server/flags_<group>.cc).
const std::map<std::string, std::vector<std::string>>& Expected() {
  static const auto* groups =
      new std::map<std::string, std::vector<std::string>>{
          {"listeners and TLS (gRPC, HTTP gateway, metrics)",
           {"listen", "http_listen", "metrics_listen", "tls_cert_file",
            "http_tls_cert_file", "metrics_public", "tls_reload_interval"}},
          {"limits (connections, memory, pending decodes, shutdown)",
           {"max_streams_per_connection", "max_memory", "max_pending",
            "batch_window", "shutdown_grace"}},
          {"upstream (vPIC, rate, retries, breaker)",
           {"vpic_base_url", "upstream_rate", "retry_base", "max_attempts",
            "retry_budget", "breaker_failures"}},
          {"tenants (identity, priority, fair share, peak hours)",
           {"tenant_header", "trusted_proxies", "interactive_tenants",
            "tenant_weights", "bulk_min_share", "peak_hours", "max_tenants"}},
          {"cache and snapshot (finished decodes, offline vPIC data)",
           {"cache_capacity", "cache_path", "snapshot_path",
            "source_preference"}},
          {"gateway (HTTP deadline, threads, connections, hosts, CORS)",
           {"http_deadline", "http_threads", "http_max_connections",
            "fd_reserve", "http_allowed_hosts", "http_cors_origins"}},
          {"fleet (Redis shared by the replicas)",
           {"redis_url", "redis_password_file", "redis_tls_ca_file",
            "fleet_secret_file", "fleet_lease"}},
          {"logging (level, format, queue)",
           {"log_level", "log_format", "log_queue_lines"}},
          {"jobs (bulk jobs: store, window, limits, notifications)",
           {"job_path", "job_window", "job_concurrency", "job_max_items",
            "job_max_open", "job_max_bytes", "job_retention",
            "job_notify_hosts"}},
      };
  return *groups;
}

// The flags of README.md's "Server flags" table.
std::set<std::string> ReadmeFlags() {
  std::ifstream in(std::string(VIN_SOURCE_DIR) + "/README.md");
  std::set<std::string> flags;
  static const std::regex kName("--([a-z0-9_]+)");
  bool in_section = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## Server flags";
    if (!in_section || line.rfind("| `--", 0) != 0) continue;
    const std::string first_cell = line.substr(1, line.find('|', 1) - 1);
    for (std::sregex_iterator it(first_cell.begin(), first_cell.end(), kName),
         end;
         it != end; ++it) {
      flags.insert((*it)[1]);
    }
  }
  return flags;
}

TEST(HelpFlag, GroupsTheFlagsByConcernUnderTitles) {
  const Help help = Parse(Output("--help"));
  // abseil prints the groups in the order of their titles (as std::map
  // orders them), each once; no other group (abseil's own flags).
  std::vector<std::string> expected;
  for (const auto& [title, flags] : Expected()) expected.push_back(title);
  EXPECT_EQ(help.titles, expected);
  for (const auto& [title, flags] : Expected()) {
    const auto group = help.groups.find(title);
    ASSERT_NE(group, help.groups.end()) << title;
    for (const std::string& flag : flags) {
      EXPECT_THAT(group->second, testing::Contains(flag)) << title;
    }
  }
}

TEST(HelpFlag, ListsEveryFlagOnceAndTheReadmeListsTheSameFlags) {
  const Help help = Parse(Output("--help"));
  std::set<std::string> listed;
  for (const auto& [flag, n] : help.flags_seen) {
    EXPECT_EQ(n, 1) << "--" << flag << " listed " << n << " times";
    listed.insert(flag);
  }
  const std::set<std::string> readme = ReadmeFlags();
  ASSERT_GT(readme.size(), 50u) << "README.md's \"Server flags\" table";
  EXPECT_EQ(listed, readme) << "--help: " << absl::StrJoin(listed, " ")
                            << "\nREADME: " << absl::StrJoin(readme, " ");
}

// Each flag with its help text and default.
TEST(HelpFlag, ListsTheServersFlags) {
  const std::string text = absl::StrJoin(Output("--help"), "\n");
  for (const char* flag :
       {"--listen", "--upstream_rate", "--http_deadline", "--peak_hours",
        "--log_level", "--shutdown_grace", "--redis_password_file",
        "--redis_tls_ca_file", "--fleet_secret_file"}) {
    EXPECT_THAT(text, HasSubstr(absl::StrCat("    ", flag, " ("))) << flag;
  }
  EXPECT_THAT(text, HasSubstr("default: 1000;")) << "--upstream_rate's default";
  EXPECT_THAT(text, testing::Not(HasSubstr("--flagfile (")))
      << "abseil's own flags are for --helpfull";
}

TEST(HelpfullFlag, AddsAbseilsFlagsToTheGroups) {
  const std::vector<std::string> lines = Output("--helpfull");
  const Help help = Parse(lines);
  for (const auto& [title, flags] : Expected()) {
    const auto seen = help.titles_seen.find(title);
    EXPECT_TRUE(seen != help.titles_seen.end() && seen->second == 1) << title;
  }
  EXPECT_EQ(help.flags_seen.count("flagfile"), 1u);
  EXPECT_EQ(help.flags_seen.count("fromenv"), 1u);
  EXPECT_EQ(help.flags_seen.count("upstream_rate"), 1u);
}

}  // namespace
