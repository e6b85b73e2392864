// Rule 21's comparison, pure: values compared as vPIC variables, each
// variable's outcome, the make/model/year judgement, and the tracker's
// bounds (20 examples per variable, newest first; the window).
#include "snapshot/parity.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace snapshot {
namespace {

domain::Vehicle Of(std::map<std::string, std::string> attributes) {
  domain::Vehicle v;
  v.attributes = std::move(attributes);
  return v;
}

// The snapshot's side as Snapshot::DecodeVariables gives it: one value per
// variable, "" for none.
std::vector<std::string> ValuesOf(const domain::Vehicle& v,
                                  const std::vector<std::string>& variables) {
  std::vector<std::string> out;
  for (const std::string& name : variables) {
    auto it = v.attributes.find(name);
    out.push_back(it == v.attributes.end() ? "" : it->second);
  }
  return out;
}

TEST(SameValue, IgnoresCaseAndBlanksAndComparesNumbersByValue) {
  EXPECT_TRUE(SameValue("FORD", "Ford"));
  EXPECT_TRUE(SameValue(" TRUCK ", "truck"));
  EXPECT_TRUE(SameValue("2.0", "2"));
  EXPECT_TRUE(SameValue("3.50", "3.5"));
  EXPECT_FALSE(SameValue("2.0", "2.1"));
  EXPECT_FALSE(SameValue("F-150", "F-550"));
  EXPECT_TRUE(SameValue("+2", "2.00"));
  EXPECT_TRUE(SameValue(".5", "0.5"));
  EXPECT_FALSE(SameValue("inf", "infinity"));  // words, not numbers
}

TEST(CompareDecodes, GivesEachVariableEitherSideHasItsOutcome) {
  const std::vector<std::string> variables = {"BodyClass", "Make", "Model",
                                              "ModelYear", "Trim"};
  const domain::Vehicle live = Of({{"Make", "FORD"},
                                   {"Model", "F-150"},
                                   {"ModelYear", "2021"},
                                   {"Trim", "XLT"},
                                   {"Series", "not the snapshot's"}});
  const domain::Vehicle snap = Of({{"Make", "Ford"},
                                   {"Model", "F-550"},
                                   {"ModelYear", "2021"},
                                   {"BodyClass", "Pickup"}});
  const std::vector<std::string> snap_values = ValuesOf(snap, variables);
  const std::vector<VariableParity> out =
      CompareDecodes(live, snap_values, variables);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].variable, "BodyClass");
  EXPECT_EQ(out[0].outcome, ParityOutcome::kLiveMissing);
  EXPECT_EQ(out[1].outcome, ParityOutcome::kAgree);
  EXPECT_EQ(out[2].outcome, ParityOutcome::kDiffer);
  EXPECT_EQ(out[2].live, "F-150");
  EXPECT_EQ(out[2].snapshot, "F-550");
  EXPECT_EQ(out[3].outcome, ParityOutcome::kAgree);
  EXPECT_EQ(out[4].outcome, ParityOutcome::kSnapshotMissing);
  EXPECT_EQ(MakeModelYearAgree(out), false);
}

TEST(MakeModelYearAgree, WhatVpicDoesNotGiveIsNotHeldAgainstTheSnapshot) {
  const std::vector<std::string> variables = {"Make", "Model", "ModelYear"};
  const domain::Vehicle snap =
      Of({{"Make", "FORD"}, {"Model", "F-150"}, {"ModelYear", "2021"}});
  EXPECT_EQ(MakeModelYearAgree(
                CompareDecodes(Of({{"Make", "FORD"}, {"ModelYear", "2021"}}),
                               ValuesOf(snap, variables), variables)),
            true);
  // vPIC gives none of the three: nothing to judge.
  EXPECT_FALSE(MakeModelYearAgree(
                   CompareDecodes(Of({}), ValuesOf(snap, variables), variables))
                   .has_value());
  // The snapshot lacks one vPIC gives: a disagreement.
  EXPECT_EQ(
      MakeModelYearAgree(CompareDecodes(
          snap,
          ValuesOf(Of({{"Make", "FORD"}, {"ModelYear", "2021"}}), variables),
          variables)),
      false);
}

TEST(ParityTracker, KeepsTheNewestTwentyExamplesAndTheLastWindow) {
  ParityTracker tracker(4);
  const std::vector<std::string> variables = {"Make", "Model", "ModelYear"};
  const domain::Vehicle good =
      Of({{"Make", "FORD"}, {"Model", "F-150"}, {"ModelYear", "2021"}});
  for (int i = 0; i < 25; ++i) {
    const domain::Vehicle live = Of({{"Make", "FORD"},
                                     {"Model", absl::StrCat("M", i)},
                                     {"ModelYear", "2021"}});
    tracker.Record(absl::StrCat("VIN", i), absl::FromUnixSeconds(i),
                   CompareDecodes(live, ValuesOf(good, variables), variables));
  }
  ParityReport r = tracker.Report();
  EXPECT_EQ(r.compared, 25);
  const VariableCounts& model = r.variables.at("Model");
  EXPECT_EQ(model.by_outcome[static_cast<int>(ParityOutcome::kDiffer)], 25);
  ASSERT_EQ(model.examples.size(), ParityTracker::kExamples);
  EXPECT_EQ(model.examples.front().vin, "VIN24");
  EXPECT_EQ(model.examples.front().live, "M24");
  EXPECT_EQ(model.examples.back().vin, "VIN5");
  EXPECT_EQ(r.variables.at("Make").examples.size(), 0u);
  EXPECT_EQ(r.make_model_year_agreement, 0.0);
  // Three agreeing decodes: 3 of the last 4.
  for (int i = 0; i < 3; ++i) {
    tracker.Record("GOOD", absl::UnixEpoch(),
                   CompareDecodes(good, ValuesOf(good, variables), variables));
  }
  size_t judged = 0;
  EXPECT_EQ(tracker.Agreement(&judged), 0.75);
  EXPECT_EQ(judged, 4u);
  tracker.Reset();
  EXPECT_EQ(tracker.Report().compared, 0);
  EXPECT_TRUE(tracker.Report().variables.empty());
  EXPECT_FALSE(tracker.Agreement().has_value());
  // The totals (the metrics' counters) outlive a reset.
  const auto totals = tracker.Totals();
  EXPECT_EQ(totals.at("Model")[static_cast<int>(ParityOutcome::kDiffer)], 25);
  EXPECT_EQ(totals.at("Model")[static_cast<int>(ParityOutcome::kAgree)], 3);
  EXPECT_EQ(totals.at("Make")[static_cast<int>(ParityOutcome::kAgree)], 28);
  // And what comes after it is counted and listed afresh.
  const domain::Vehicle live =
      Of({{"Make", "FORD"}, {"Model", "F-250"}, {"ModelYear", "2021"}});
  tracker.Record("AFTER", absl::UnixEpoch(),
                 CompareDecodes(live, ValuesOf(good, variables), variables));
  r = tracker.Report();
  EXPECT_EQ(r.compared, 1);
  ASSERT_EQ(r.variables.at("Model").examples.size(), 1u);
  EXPECT_EQ(r.variables.at("Model").examples.front().vin, "AFTER");
  EXPECT_EQ(r.variables.at("Model").examples.front().live, "F-250");
  EXPECT_EQ(
      tracker.Totals().at("Model")[static_cast<int>(ParityOutcome::kDiffer)],
      26);
}

}  // namespace
}  // namespace snapshot
