// `vinctl decode`: formatting, and one call through the in-process server.
#include "client/decode_command.h"

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "client/batch.h"
#include "gmock/gmock.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "gtest/gtest.h"
#include "testing/server_fixture.h"

namespace vinctl {
namespace {

using testing::HasSubstr;
using testing::StartsWith;

constexpr char kFord[] = "1FTMW1T88MFA00001";
constexpr char kHonda[] = "1HGCM82633A004352";

TEST(FormatDecodeResult, HeadlineFieldsAndNotes) {
  vin::v1::DecodeResult r;
  r.set_vin(kFord);
  r.set_source(vin::v1::SOURCE_VPIC);
  r.set_attempts(1);
  r.mutable_vehicle()->set_make("FORD");
  r.mutable_vehicle()->set_model("F-150");
  r.mutable_vehicle()->set_model_year(2021);
  r.mutable_vehicle()->set_vehicle_type("TRUCK");
  r.mutable_vehicle()->set_engine_cylinders(6);
  r.mutable_vehicle()->set_displacement_l(3.5);
  auto* note = r.add_notes();
  note->set_code("0");
  note->set_message("0 - VIN decoded clean");
  auto* warn = r.add_notes();
  warn->set_code("check_digit");
  warn->set_message("position 9 is '4', expected '3'");
  EXPECT_EQ(FormatDecodeResult(r),
            "1FTMW1T88MFA00001  FORD F-150 2021 (source VPIC, 1 attempt)\n"
            "  vehicle type    TRUCK\n"
            "  engine          6 cylinders, 3.5 L\n"
            "  note            0 - VIN decoded clean\n"
            "  note            check_digit: position 9 is '4', expected '3'\n");
}

TEST(FormatDecodeResult, SparseCachedResult) {
  vin::v1::DecodeResult r;
  r.set_vin(kHonda);
  r.set_source(vin::v1::SOURCE_CACHE);
  r.set_attempts(0);
  EXPECT_EQ(FormatDecodeResult(r),
            "1HGCM82633A004352  (make, model and year not provided) (source "
            "CACHE, 0 attempts)\n");
}

TEST(FormatRpcError, CodeMessageAndRetryInfo) {
  EXPECT_EQ(FormatRpcError(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                        "VIN is empty")),
            "vinctl: INVALID_ARGUMENT: VIN is empty");
  google::rpc::RetryInfo info;
  info.mutable_retry_delay()->set_seconds(2);
  info.mutable_retry_delay()->set_nanos(500000000);
  google::rpc::Status details;
  details.set_code(14);
  details.add_details()->PackFrom(info);
  EXPECT_EQ(FormatRpcError(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                        "vPIC unavailable",
                                        details.SerializeAsString())),
            "vinctl: UNAVAILABLE: vPIC unavailable; retry after 2.5s");
}

// Rule 21: an invalid VIN's suggestions (BadRequest violations after the
// rule broken) are offered, the VIN first in each.
TEST(FormatRpcError, SuggestionsAreOffered) {
  google::rpc::BadRequest bad;
  auto* rule = bad.add_field_violations();
  rule->set_field("vin");
  rule->set_description("check digit mismatch");
  for (const char* v : {"1FTMW1T88MFA00001", "1FTMW1T88MFA0D001"}) {
    auto* s = bad.add_field_violations();
    s->set_field("vin");
    s->set_description(std::string(v) + ": did you mean this VIN?");
  }
  google::rpc::Status details;
  details.set_code(3);
  details.add_details()->PackFrom(bad);
  EXPECT_EQ(FormatRpcError(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                        "invalid character",
                                        details.SerializeAsString())),
            "vinctl: INVALID_ARGUMENT: invalid character; did you mean "
            "1FTMW1T88MFA00001 or 1FTMW1T88MFA0D001?");
}

class DecodeCommandTest : public testing_util::ServerFixture {
 protected:
  int Run(const DecodeOptions& options) {
    out_.str("");
    err_.str("");
    return RunDecode(options, stub_.get(), out_, err_);
  }
  std::ostringstream out_;
  std::ostringstream err_;
};

TEST_F(DecodeCommandTest, DecodesForAPerson) {
  StartServer();
  DecodeOptions options;
  options.vin = kFord;
  EXPECT_EQ(Run(options), kExitOk);
  EXPECT_THAT(out_.str(), StartsWith("1FTMW1T88MFA00001  FORD F-150 2021 "
                                     "(source VPIC, 1 attempt)\n"));
  EXPECT_EQ(err_.str(), "");
}

TEST_F(DecodeCommandTest, DecodesAsJson) {
  StartServer();
  DecodeOptions options;
  options.vin = kFord;
  options.json = true;
  EXPECT_EQ(Run(options), kExitOk);
  const auto j = nlohmann::json::parse(out_.str());
  EXPECT_EQ(j["vin"], kFord);
  EXPECT_EQ(j["vehicle"]["make"], "FORD");
  EXPECT_EQ(j["vehicle"]["model_year"], 2021);
  EXPECT_EQ(j["source"], "SOURCE_VPIC");
}

TEST_F(DecodeCommandTest, WarnPolicyDecodesABadCheckDigit) {
  StartServer();
  DecodeOptions options;
  options.vin = "1HGCM82643A004352";
  EXPECT_EQ(Run(options), kExitItemsFailed);
  EXPECT_THAT(err_.str(), StartsWith("vinctl: INVALID_ARGUMENT: "));
  EXPECT_THAT(err_.str(), HasSubstr("check digit"));
  EXPECT_EQ(out_.str(), "");

  options.warn_check_digit = true;
  EXPECT_EQ(Run(options), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("check_digit"));
}

TEST_F(DecodeCommandTest, UnavailableShowsTheSuggestedDelay) {
  server::ServerOptions o = Defaults();
  o.engine.max_attempts = 2;
  StartServer(o);
  Script(kHonda, "503,503,503");
  DecodeOptions options;
  options.vin = kHonda;
  EXPECT_EQ(Run(options), kExitItemsFailed);
  EXPECT_THAT(err_.str(), StartsWith("vinctl: UNAVAILABLE: "));
  EXPECT_THAT(err_.str(), HasSubstr("; retry after "));
}

TEST_F(DecodeCommandTest, RejectedIsFailedPrecondition) {
  StartServer();
  Script(kHonda, "404");
  DecodeOptions options;
  options.vin = kHonda;
  EXPECT_EQ(Run(options), kExitItemsFailed);
  EXPECT_THAT(err_.str(), StartsWith("vinctl: FAILED_PRECONDITION: "));
}

}  // namespace
}  // namespace vinctl
