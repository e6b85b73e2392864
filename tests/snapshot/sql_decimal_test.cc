#include "snapshot/sql_decimal.h"

#include "gtest/gtest.h"

namespace snapshot {
namespace {

struct Case {
  const char* x;
  char op;
  const char* constant;
  const char* want;
};

class DecimalFormulaTest : public ::testing::TestWithParam<Case> {};

TEST_P(DecimalFormulaTest, MatchesSqlServerDecimalResult) {
  const Case& c = GetParam();
  EXPECT_EQ(ApplyDecimalFormula(c.x, c.op, c.constant), c.want)
      << c.x << " " << c.op << " " << c.constant;
}

// The expected values are the live API's (fixtures decode-vin.json and
// decode-partial-vin.json) for the same conversions.
INSTANTIATE_TEST_SUITE_P(
    Conversions, DecimalFormulaTest,
    ::testing::Values(Case{"3.5", '*', "1000", "3500.0"},             // L -> CC
                      Case{"3.5", '/', "0.016387064", "213.58310433156"},  // L -> CI
                      Case{"181.8", '*', "16.387064", "2979.1682352"},  // CI -> CC
                      Case{"3500", '/', "1000.", "3.500000"},
                      Case{"8", '*', "2", "16"},
                      Case{"TBD", '*', "1000", "0"},   // formula failure
                      Case{"1", '/', "0", "0"},       // division by zero
                      Case{"", '*', "1", "0"}));

}  // namespace
}  // namespace snapshot
