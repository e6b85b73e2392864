// Rule 21: at most N invalid VINs a second get suggestions.
#include "engine/suggestion_budget.h"

#include "gtest/gtest.h"

namespace engine {
namespace {

TEST(SuggestionBudget, ABurstOfTheRateThenTheRateItself) {
  SuggestionBudget budget(3);
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  EXPECT_TRUE(budget.Take(t0));
  EXPECT_TRUE(budget.Take(t0));
  EXPECT_TRUE(budget.Take(t0));
  EXPECT_FALSE(budget.Take(t0));  // the burst is spent
  EXPECT_FALSE(budget.Take(t0 + absl::Milliseconds(300)));
  EXPECT_TRUE(budget.Take(t0 + absl::Milliseconds(340)));  // one a third
  EXPECT_FALSE(budget.Take(t0 + absl::Milliseconds(340)));
  // A long pause refills only up to the burst.
  const absl::Time later = t0 + absl::Hours(1);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(budget.Take(later)) << i;
  EXPECT_FALSE(budget.Take(later));
}

TEST(SuggestionBudget, ZeroMeansNone) {
  SuggestionBudget none(0);
  EXPECT_FALSE(none.Take(absl::FromUnixSeconds(1000)));
}

}  // namespace
}  // namespace engine
