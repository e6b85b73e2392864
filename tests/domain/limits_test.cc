#include "domain/limits.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace domain {
namespace {

using testing::HasSubstr;

TEST(CheckModelYear, ZeroOrTheRange) {
  struct Case {
    int year;
    bool ok;
  };
  const Case cases[] = {{0, true},     {1980, true},  {2021, true},
                        {2100, true},  {1979, false}, {1900, false},
                        {2101, false}, {-1, false}};
  for (const Case& c : cases) {
    EXPECT_EQ(CheckModelYear(c.year).ok(), c.ok) << c.year;
  }
}

TEST(CheckModelYear, TheErrorNamesTheFieldTheRangeAndTheValue) {
  const absl::Status s = CheckModelYear(1900, "--model-year");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("--model-year"));
  EXPECT_THAT(s.message(), HasSubstr("between 1980 and 2100"));
  EXPECT_THAT(s.message(), HasSubstr("1900"));
}

}  // namespace
}  // namespace domain
