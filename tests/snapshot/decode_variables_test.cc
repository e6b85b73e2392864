// Rule 21's parity decodes each live answer with Snapshot::DecodeVariables,
// the lean form of Decode: it must give, variable for variable, what
// Decode's attributes hold, or parity would measure another decoder than
// the one that answers. Checked over the golden set's VINs, each with one
// character changed at every position after the WMI (other schemas, other
// years, no match at all), their partial forms, and input Decode refuses.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "snapshot/golden.h"
#include "test_snapshot.h"
#include "util/read_file.h"

#ifndef VIN_GOLDEN_PATH
#define VIN_GOLDEN_PATH "server/snapshot_golden.csv"
#endif

namespace snapshot {
namespace {

constexpr int kReferenceYear = 2026;

std::vector<std::string> Inputs() {
  absl::StatusOr<std::string> text =
      util::ReadSmallFile(VIN_GOLDEN_PATH, "the golden set");
  EXPECT_TRUE(text.ok()) << text.status();
  absl::StatusOr<std::vector<GoldenVin>> golden =
      ParseGolden(text.ok() ? *text : "");
  EXPECT_TRUE(golden.ok()) << golden.status();
  std::vector<std::string> out;
  for (const GoldenVin& g : golden.ok() ? *golden : std::vector<GoldenVin>()) {
    out.push_back(g.vin);
    out.push_back(g.vin.substr(0, 11));  // partial: '*' after position 11
    for (size_t pos = 3; pos < 17; ++pos) {
      if (pos == 8) continue;  // the check digit decides nothing here
      for (char c : {'0', '7', 'A', 'M', 'Y'}) {
        std::string v = g.vin;
        if (v[pos] == c) continue;
        v[pos] = c;
        out.push_back(v);
      }
    }
  }
  return out;
}

TEST(DecodeVariables, GivesWhatDecodeGivesForEveryVariable) {
  SKIP_WITHOUT_SNAPSHOT();
  std::shared_ptr<const Snapshot> snap = testing::SharedSnapshot();
  ASSERT_NE(snap, nullptr);
  const std::vector<std::string>& variables = snap->variables();
  const std::vector<std::string> inputs = Inputs();
  ASSERT_GT(inputs.size(), 5000u);
  int given = 0;
  int joined = 0;  // multi-valued elements' values, joined as vPIC joins
  int ids = 0;     // MakeID and ModelID
  for (const std::string& vin : inputs) {
    for (int hint : {0, 2015}) {
      absl::StatusOr<SnapshotDecode> full =
          snap->Decode(vin, hint, kReferenceYear);
      absl::StatusOr<std::vector<std::string>> lean =
          snap->DecodeVariables(vin, hint, kReferenceYear);
      ASSERT_TRUE(full.ok()) << vin << ": " << full.status();
      ASSERT_TRUE(lean.ok()) << vin << ": " << lean.status();
      ASSERT_EQ(lean->size(), variables.size());
      for (size_t i = 0; i < variables.size(); ++i) {
        auto it = full->vehicle.attributes.find(variables[i]);
        const std::string want =
            it == full->vehicle.attributes.end() ? "" : it->second;
        ASSERT_EQ((*lean)[i], want)
            << vin << " hint " << hint << " " << variables[i];
        if (want.empty()) continue;
        ++given;
        if (absl::StrContains(want, "; ")) ++joined;
        if (variables[i] == "MakeID" || variables[i] == "ModelID") ++ids;
      }
    }
  }
  // The comparison reached what it must: values, joined lists and the ids.
  EXPECT_GT(given, 50000);
  EXPECT_GT(joined, 0);
  EXPECT_GT(ids, 1000);
}

TEST(DecodeVariables, RefusesWhatDecodeRefuses) {
  SKIP_WITHOUT_SNAPSHOT();
  std::shared_ptr<const Snapshot> snap = testing::SharedSnapshot();
  ASSERT_NE(snap, nullptr);
  for (const auto& [vin, year] : std::vector<std::pair<std::string, int>>{
           {"1F", kReferenceYear},
           {"1FTMW1T88MFA000012", kReferenceYear},
           {"1ftmw1t88mfa00001", kReferenceYear},
           {"1FTMW1T88MFA00001", 0}}) {
    const absl::Status full = snap->Decode(vin, 0, year).status();
    const absl::Status lean = snap->DecodeVariables(vin, 0, year).status();
    EXPECT_EQ(full.code(), absl::StatusCode::kInvalidArgument) << vin;
    EXPECT_EQ(lean, full) << vin;
  }
}

}  // namespace
}  // namespace snapshot
