// vinctl's command line (CLI11): commands, flags in every accepted spelling,
// their checks, the help and the usage errors.
#include "client/command_line.h"

#include <sstream>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "client/batch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace vinctl {
namespace {

using testing::AllOf;
using testing::HasSubstr;
using testing::Not;
using testing::StartsWith;

constexpr char kFord[] = "1FTMW1T88MFA00001";

class CommandLineTest : public testing::Test {
 protected:
  // Parses `args`; the exit status when vinctl would exit at once.
  absl::optional<int> Parse(const std::vector<std::string>& args) {
    out_.str("");
    err_.str("");
    command_line_ = CommandLine();
    return ParseCommandLine(args, &command_line_, out_, err_);
  }

  // Parses `args`, which must be a usage error; returns its stderr.
  std::string UsageError(const std::vector<std::string>& args) {
    const absl::optional<int> exit = Parse(args);
    EXPECT_EQ(exit, kExitError) << testing::PrintToString(args);
    EXPECT_EQ(out_.str(), "") << "usage errors go to stderr only";
    EXPECT_THAT(err_.str(), StartsWith("vinctl: "));
    EXPECT_THAT(err_.str(), HasSubstr("\nTry 'vinctl"));
    return err_.str();
  }

  CommandLine command_line_;
  std::ostringstream out_;
  std::ostringstream err_;
};

TEST_F(CommandLineTest, DecodeDefaults) {
  ASSERT_EQ(Parse({"decode", kFord}), absl::nullopt) << err_.str();
  EXPECT_EQ(command_line_.command, Command::kDecode);
  EXPECT_EQ(command_line_.decode.vin, kFord);
  EXPECT_EQ(command_line_.server, "127.0.0.1:50051");
  EXPECT_EQ(command_line_.decode.deadline, absl::Seconds(30));
  EXPECT_EQ(command_line_.decode.stagger, absl::ZeroDuration());
  EXPECT_EQ(command_line_.decode.model_year, 0);
  EXPECT_FALSE(command_line_.decode.json);
  EXPECT_FALSE(command_line_.decode.warn_check_digit);
  EXPECT_EQ(command_line_.tls.ca_file, "");
  EXPECT_EQ(err_.str(), "");
}

TEST_F(CommandLineTest, BatchDefaults) {
  ASSERT_EQ(Parse({"batch"}), absl::nullopt) << err_.str();
  EXPECT_EQ(command_line_.command, Command::kBatch);
  EXPECT_EQ(command_line_.in, "-");
  EXPECT_EQ(command_line_.out, "-");
  EXPECT_EQ(command_line_.batch.format, feed::OutputFormat::kCsv);
  EXPECT_EQ(command_line_.batch.window, 512);
  EXPECT_EQ(command_line_.batch.deadline, absl::ZeroDuration())
      << "a batch has no deadline unless asked";
  EXPECT_EQ(command_line_.batch.stagger, absl::ZeroDuration());
  EXPECT_EQ(command_line_.batch.model_year, 0);
}

TEST_F(CommandLineTest, DecodeFlagsWithEqualsAndDashes) {
  ASSERT_EQ(Parse({"decode", kFord, "--server=vin.example:443", "--deadline=2m",
                   "--model-year=2021", "--json", "--warn-check-digit",
                   "--stagger=500ms", "--tls-ca-file=ca.pem",
                   "--tls-cert-file=c.pem", "--tls-key-file=c.key"}),
            absl::nullopt)
      << err_.str();
  EXPECT_EQ(command_line_.server, "vin.example:443");
  EXPECT_EQ(command_line_.decode.deadline, absl::Minutes(2));
  EXPECT_EQ(command_line_.decode.model_year, 2021);
  EXPECT_TRUE(command_line_.decode.json);
  EXPECT_TRUE(command_line_.decode.warn_check_digit);
  EXPECT_EQ(command_line_.decode.stagger, absl::Milliseconds(500));
  EXPECT_EQ(command_line_.tls.ca_file, "ca.pem");
  EXPECT_EQ(command_line_.tls.cert_file, "c.pem");
  EXPECT_EQ(command_line_.tls.key_file, "c.key");
}

TEST_F(CommandLineTest, DecodeFlagsWithSpacesAndUnderscores) {
  // Flags before the VIN, values as separate words, absl-style names.
  ASSERT_EQ(Parse({"decode", "--server", "vin.example:443", "--deadline",
                   "1h30m", "--model_year", "2021", "--warn_check_digit",
                   "--tls_ca_file", "ca.pem", "--tls_cert_file", "c.pem",
                   "--tls_key_file", "c.key", kFord}),
            absl::nullopt)
      << err_.str();
  EXPECT_EQ(command_line_.decode.vin, kFord);
  EXPECT_EQ(command_line_.server, "vin.example:443");
  EXPECT_EQ(command_line_.decode.deadline, absl::Minutes(90));
  EXPECT_EQ(command_line_.decode.model_year, 2021);
  EXPECT_TRUE(command_line_.decode.warn_check_digit);
  EXPECT_EQ(command_line_.tls.ca_file, "ca.pem");
  EXPECT_EQ(command_line_.tls.cert_file, "c.pem");
  EXPECT_EQ(command_line_.tls.key_file, "c.key");
}

TEST_F(CommandLineTest, BatchFlags) {
  ASSERT_EQ(
      Parse({"batch", "--in=feed.csv", "--out", "out.ndjson", "--format=NDJSON",
             "--window", "64", "--deadline=2h", "--stagger=5m",
             "--model_year=1999", "--warn-check-digit", "--server=h:1"}),
      absl::nullopt)
      << err_.str();
  EXPECT_EQ(command_line_.command, Command::kBatch);
  EXPECT_EQ(command_line_.in, "feed.csv");
  EXPECT_EQ(command_line_.out, "out.ndjson");
  EXPECT_EQ(command_line_.batch.format, feed::OutputFormat::kNdjson);
  EXPECT_EQ(command_line_.batch.window, 64);
  EXPECT_EQ(command_line_.batch.deadline, absl::Hours(2));
  EXPECT_EQ(command_line_.batch.stagger, absl::Minutes(5));
  EXPECT_EQ(command_line_.batch.model_year, 1999);
  EXPECT_TRUE(command_line_.batch.warn_check_digit);
  EXPECT_EQ(command_line_.server, "h:1");
}

TEST_F(CommandLineTest, SwitchesTurnOffInEverySpelling) {
  for (const std::string off :
       {"--json=false", "--no-json", "--nojson", "--no_json"}) {
    ASSERT_EQ(Parse({"decode", kFord, "--json", off}), absl::nullopt)
        << off << ": " << err_.str();
    EXPECT_FALSE(command_line_.decode.json) << off;
  }
  for (const std::string off :
       {"--warn-check-digit=false", "--no-warn-check-digit",
        "--nowarn_check_digit", "--no_warn_check_digit"}) {
    ASSERT_EQ(Parse({"batch", "--warn-check-digit", off}), absl::nullopt)
        << off << ": " << err_.str();
    EXPECT_FALSE(command_line_.batch.warn_check_digit) << off;
  }
  ASSERT_EQ(Parse({"decode", kFord, "--json=true"}), absl::nullopt);
  EXPECT_TRUE(command_line_.decode.json);
}

TEST_F(CommandLineTest, RepeatedFlagLastWins) {
  ASSERT_EQ(Parse({"batch", "--window=3", "--window=7", "--in=a", "--in=b"}),
            absl::nullopt)
      << err_.str();
  EXPECT_EQ(command_line_.batch.window, 7);
  EXPECT_EQ(command_line_.in, "b");
}

TEST_F(CommandLineTest, DashIsAVinAfterDoubleDash) {
  ASSERT_EQ(Parse({"decode", "--json", "--", "-1FTMW"}), absl::nullopt)
      << err_.str();
  EXPECT_EQ(command_line_.decode.vin, "-1FTMW");
}

TEST_F(CommandLineTest, HelpListsCommandsAndExitStatus) {
  for (const std::string flag : {"--help", "-h"}) {
    ASSERT_EQ(Parse({flag}), kExitOk) << flag;
    EXPECT_EQ(err_.str(), "");
    EXPECT_THAT(out_.str(),
                AllOf(HasSubstr("Usage: vinctl"), HasSubstr("decode"),
                      HasSubstr("batch"), HasSubstr("Exit status:"),
                      HasSubstr("2  usage error")));
  }
}

TEST_F(CommandLineTest, DecodeHelpListsItsFlagsOnly) {
  ASSERT_EQ(Parse({"decode", "--help"}), kExitOk) << "no VIN needed for help";
  EXPECT_EQ(err_.str(), "");
  const std::string help = out_.str();
  EXPECT_THAT(help, HasSubstr("Usage: vinctl decode [OPTIONS] VIN"));
  for (const char* flag :
       {"--json", "--server ADDR=127.0.0.1:50051", "--deadline DUR=30s",
        "--model-year YEAR=0", "--warn-check-digit", "--stagger DUR=0",
        "--tls-ca-file PEM", "--tls-cert-file PEM", "--tls-key-file PEM"}) {
    EXPECT_THAT(help, HasSubstr(flag));
  }
  EXPECT_THAT(help, AllOf(Not(HasSubstr("--window")), Not(HasSubstr("--in "))));
  // One name per flag: the other spellings are told once, not listed.
  const size_t options = help.find("Options:");
  const size_t footer = help.find("Flags go after the command");
  ASSERT_LT(options, footer);
  const std::string listed = help.substr(options, footer - options);
  EXPECT_THAT(listed,
              AllOf(Not(HasSubstr("--model_year")), Not(HasSubstr("--no-json")),
                    Not(HasSubstr("--tls_ca_file"))));
  EXPECT_THAT(help.substr(footer),
              HasSubstr("'-' and '_' are\nthe same in names"));
}

TEST_F(CommandLineTest, BatchHelpListsItsFlagsAndFormats) {
  ASSERT_EQ(Parse({"batch", "--help"}), kExitOk);
  const std::string help = out_.str();
  EXPECT_THAT(help, HasSubstr("Usage: vinctl batch [OPTIONS]"));
  for (const char* flag :
       {"--in FILE=-", "--out FILE=-", "--format csv|ndjson=csv",
        "--window N=512", "--deadline DUR=0", "--stagger DUR=0",
        "--model-year YEAR=0", "--warn-check-digit", "--server ADDR",
        "--tls-ca-file PEM"}) {
    EXPECT_THAT(help, HasSubstr(flag));
  }
  EXPECT_THAT(help, Not(HasSubstr("--json")));
  EXPECT_THAT(help,
              AllOf(HasSubstr("failure_reason"), HasSubstr("STREAM_ENDED"),
                    HasSubstr("--format=ndjson"), HasSubstr("Exit status:")));
}

TEST_F(CommandLineTest, MissingOrUnknownCommand) {
  EXPECT_THAT(UsageError({}),
              HasSubstr("a command is needed: decode, batch or job"));
  EXPECT_THAT(
      UsageError({"frob"}),
      HasSubstr("unknown command 'frob' (commands: decode, batch, job)"));
  EXPECT_THAT(UsageError({"--server=h:1", "batch"}),
              HasSubstr("'--server=h:1' before the command"));
  EXPECT_THAT(UsageError({"frob"}), HasSubstr("Try 'vinctl --help'."));
}

TEST_F(CommandLineTest, UnknownFlagsAndFlagsOfTheOtherCommand) {
  const std::string unknown = UsageError({"batch", "--frob=1"});
  EXPECT_THAT(unknown, HasSubstr("--frob=1"));
  EXPECT_THAT(unknown, HasSubstr("Try 'vinctl batch --help'."));
  EXPECT_THAT(UsageError({"batch", "--json"}), HasSubstr("--json"));
  EXPECT_THAT(UsageError({"decode", kFord, "--window=4"}),
              HasSubstr("--window=4"));
  EXPECT_THAT(UsageError({"decode", kFord, "-json"}), HasSubstr("-json"))
      << "long names take two dashes";
}

TEST_F(CommandLineTest, Arguments) {
  EXPECT_THAT(UsageError({"decode"}), HasSubstr("VIN is required"));
  EXPECT_THAT(UsageError({"decode", kFord, "1HGCM82633A004352"}),
              HasSubstr("not expected: 1HGCM82633A004352"));
  EXPECT_THAT(UsageError({"batch", "feed.csv"}),
              HasSubstr("not expected: feed.csv"));
  EXPECT_THAT(UsageError({"decode", kFord, "--server"}), HasSubstr("--server"))
      << "a value is missing";
}

TEST_F(CommandLineTest, BadDurations) {
  EXPECT_THAT(UsageError({"batch", "--stagger=5x"}),
              HasSubstr("--stagger: '5x' is not a duration"));
  EXPECT_THAT(UsageError({"decode", kFord, "--deadline", "30"}),
              HasSubstr("--deadline: '30' is not a duration"))
      << "a duration needs its unit";
  EXPECT_THAT(UsageError({"batch", "--deadline=-1s"}),
              HasSubstr("--deadline must not be negative, got -1s"));
}

TEST_F(CommandLineTest, ModelYearRange) {
  const std::string range =
      "--model-year must be 0 (no hint) or between 1980 and 2100, got ";
  EXPECT_THAT(UsageError({"decode", kFord, "--model-year=1900"}),
              HasSubstr(range + "1900"));
  EXPECT_THAT(UsageError({"batch", "--model_year", "2101"}),
              HasSubstr(range + "2101"));
  EXPECT_THAT(UsageError({"batch", "--model-year=MY21"}),
              HasSubstr("--model-year"));
  for (const char* year : {"0", "1980", "2100"}) {
    EXPECT_EQ(Parse({"batch", std::string("--model-year=") + year}),
              absl::nullopt)
        << year << ": " << err_.str();
  }
}

TEST_F(CommandLineTest, BatchValueChecks) {
  EXPECT_THAT(UsageError({"batch", "--window=0"}),
              HasSubstr("--window must be at least 1, got 0"));
  EXPECT_THAT(UsageError({"batch", "--window=many"}), HasSubstr("--window"));
  EXPECT_THAT(UsageError({"batch", "--format=xml"}),
              HasSubstr("--format must be csv or ndjson, got 'xml'"));
  EXPECT_THAT(UsageError({"batch", "--server="}), HasSubstr("--server"));
  EXPECT_THAT(UsageError({"batch", "--server", ""}),
              HasSubstr("--server must not be empty"));
}

}  // namespace
}  // namespace vinctl
