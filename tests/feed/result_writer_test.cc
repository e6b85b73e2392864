// Output records of `vinctl batch` (CSV and NDJSON) and the stderr lines.
#include "feed/result_writer.h"

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "domain/failure.h"
#include "feed/csv.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace feed {
namespace {

using testing::HasSubstr;

vin::v1::DecodeResult FordResult() {
  vin::v1::DecodeResult r;
  r.set_vin("1FTMW1T88MFA00001");
  r.set_source(vin::v1::SOURCE_CACHE);
  r.set_attempts(0);
  auto* v = r.mutable_vehicle();
  v->set_make("FORD");
  v->set_model("F-150");
  v->set_model_year(2021);
  v->set_manufacturer("FORD MOTOR COMPANY, USA");
  v->set_engine_cylinders(6);
  v->set_displacement_l(3.5);
  auto* n1 = r.add_notes();
  n1->set_code("1");
  auto* n2 = r.add_notes();
  n2->set_code("8");
  return r;
}

vin::v1::FailedEvent InvalidVin() {
  vin::v1::FailedEvent f;
  f.set_reason(vin::v1::FAILURE_REASON_INVALID_VIN);
  f.set_message("check digit: position 9 is '4', expected '3'");
  return f;
}

std::vector<std::string> Parse(const std::string& line) {
  auto fields = ParseCsvRecord(line);
  EXPECT_TRUE(fields.ok()) << fields.status();
  return fields.ok() ? *fields : std::vector<std::string>{};
}

TEST(FailureReasonName, DropsThePrefix) {
  EXPECT_EQ(FailureReasonName(vin::v1::FAILURE_REASON_INVALID_VIN),
            "INVALID_VIN");
  EXPECT_EQ(FailureReasonName(vin::v1::FAILURE_REASON_UPSTREAM_REJECTED),
            "UPSTREAM_REJECTED");
  EXPECT_EQ(FailureReasonName(static_cast<vin::v1::FailureReason>(99)), "99");
}

TEST(ResultWriterCsv, HeaderThenDoneAndFailedRows) {
  std::ostringstream out;
  ResultWriter writer(OutputFormat::kCsv, {"stock", "VIN", "price"}, &out);
  ASSERT_TRUE(writer.WriteHeader().ok());
  ASSERT_TRUE(writer
                  .Write(0, {"S-1", "1FTMW1T88MFA00001", "31,500"},
                         Outcome::Done(FordResult()))
                  .ok());
  ASSERT_TRUE(writer
                  .Write(1, {"S-2", "1HGCM82643A004352", ""},
                         Outcome::Failed(InvalidVin()))
                  .ok());
  std::istringstream lines(out.str());
  std::string header, done, failed;
  std::getline(lines, header);
  std::getline(lines, done);
  std::getline(lines, failed);
  EXPECT_EQ(header,
            "stock,VIN,price,status,source,make,model,model_year,trim,series,"
            "manufacturer,vehicle_type,body_class,drive_type,"
            "fuel_type_primary,engine_cylinders,displacement_l,plant_country,"
            "attempts,notes,failure_reason,error");
  EXPECT_EQ(done,
            "S-1,1FTMW1T88MFA00001,\"31,500\",done,CACHE,FORD,F-150,2021,,,"
            "\"FORD MOTOR COMPANY, USA\",,,,,6,3.5,,0,1;8,,");
  // 14 empty vehicle columns (source .. plant_country), attempts, no notes.
  EXPECT_EQ(failed, "S-2,1HGCM82643A004352,,failed" + std::string(14, ',') +
                        ",0,,INVALID_VIN,"
                        "\"check digit: position 9 is '4', expected '3'\"");
  EXPECT_EQ(Parse(failed).size(), 3 + kResultColumns.size());
}

TEST(ResultWriterCsv, ClientFailureHasItsOwnReason) {
  std::ostringstream out;
  ResultWriter writer(OutputFormat::kCsv, {"vin"}, &out);
  ASSERT_TRUE(
      writer.Write(0, {"X"}, Outcome::ClientFailure("STREAM_ENDED", "gone"))
          .ok());
  auto fields = Parse(out.str().substr(0, out.str().size() - 1));
  ASSERT_EQ(fields.size(), 1 + kResultColumns.size());
  EXPECT_EQ(fields[1], "failed");
  EXPECT_EQ(fields[fields.size() - 2], "STREAM_ENDED");
  EXPECT_EQ(fields.back(), "gone");
}

TEST(ResultWriterNdjson, OneObjectPerLineWithInputAndMessage) {
  std::ostringstream out;
  ResultWriter writer(OutputFormat::kNdjson, {"stock", "VIN"}, &out);
  ASSERT_TRUE(writer.WriteHeader().ok());
  ASSERT_TRUE(writer
                  .Write(7, {"S-\"1\"", "1FTMW1T88MFA00001"},
                         Outcome::Done(FordResult()))
                  .ok());
  ASSERT_TRUE(
      writer
          .Write(8, {"S-2", "1HGCM82643A004352"}, Outcome::Failed(InvalidVin()))
          .ok());
  std::istringstream lines(out.str());
  std::string l1, l2, l3;
  ASSERT_TRUE(std::getline(lines, l1));
  ASSERT_TRUE(std::getline(lines, l2));
  EXPECT_FALSE(std::getline(lines, l3)) << "no header line in NDJSON";

  const auto done = nlohmann::ordered_json::parse(l1);
  EXPECT_EQ(done["input"].dump(),
            R"({"stock":"S-\"1\"","VIN":"1FTMW1T88MFA00001"})")
      << "columns in input order";
  EXPECT_EQ(done["request_id"], "7");
  EXPECT_EQ(done["status"], "done");
  EXPECT_EQ(done["result"]["vehicle"]["make"], "FORD");
  EXPECT_EQ(done["result"]["vehicle"]["model_year"], 2021);
  EXPECT_EQ(done["result"]["source"], "SOURCE_CACHE");
  EXPECT_FALSE(done.contains("failure"));

  const auto failed = nlohmann::json::parse(l2);
  EXPECT_EQ(failed["status"], "failed");
  EXPECT_EQ(failed["failure_reason"], "INVALID_VIN");
  EXPECT_EQ(failed["failure"]["reason"], "FAILURE_REASON_INVALID_VIN");
  EXPECT_THAT(failed["failure"]["message"].get<std::string>(),
              HasSubstr("check digit"));
  EXPECT_FALSE(failed.contains("result"));
}

TEST(ResultWriterNdjson, InputThatIsNotUtf8StillGivesValidJson) {
  std::ostringstream out;
  ResultWriter writer(OutputFormat::kNdjson, {"vin", "dealer"}, &out);
  ASSERT_TRUE(
      writer
          .Write(0, {"X", "Caf\xe9"}, Outcome::ClientFailure("BAD_ROW", "bad"))
          .ok());
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["input"]["dealer"], "Caf\xef\xbf\xbd");
}

TEST(ResultWriter, ReportsAFailedStream) {
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  ResultWriter writer(OutputFormat::kCsv, {"vin"}, &out);
  EXPECT_EQ(writer.WriteHeader().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace feed
