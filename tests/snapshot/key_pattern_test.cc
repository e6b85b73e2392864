#include "snapshot/key_pattern.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace snapshot {
namespace {

struct MatchCase {
  const char* key;
  const char* vin;
  bool matches;
};

// Descriptor of 1FTMW1T88MFA00001: "MW1T8|MFA00001".
constexpr char kFord[] = "1FTMW1T88MFA00001";

class KeyMatchTest : public ::testing::TestWithParam<MatchCase> {};

TEST_P(KeyMatchTest, MatchesWholeKeyAsPrefixOfDescriptor) {
  const MatchCase& c = GetParam();
  std::vector<uint64_t> pool;
  const CompiledKey key = CompileKey(c.key, &pool);
  EXPECT_EQ(KeyMatches(key, pool.data(), MakeDescriptor(c.vin)), c.matches)
      << "key " << c.key << " vin " << c.vin;
}

INSTANTIATE_TEST_SUITE_P(
    Keys, KeyMatchTest,
    ::testing::Values(
        MatchCase{"W", kFord, false},        // position 4 is M
        MatchCase{"M", kFord, true},
        MatchCase{"*W1", kFord, true},
        MatchCase{"*W1T8", kFord, true},
        MatchCase{"*W1T9", kFord, false},
        MatchCase{"[A-N]W", kFord, true},    // range class
        MatchCase{"[ABC]W", kFord, false},   // literal class
        MatchCase{"[LM]W[12]", kFord, true},
        // '|' keys: the VDS part counts too, not only position 11.
        MatchCase{"*****|*F", kFord, true},
        MatchCase{"*****|*D", kFord, false},
        MatchCase{"MW1T8|MF", kFord, true},
        MatchCase{"MW1T9|MF", kFord, false},  // VDS part differs
        MatchCase{"*****|[A-N]F[A-C]", kFord, true},
        MatchCase{"*****|*[DE]", kFord, false},
        // A sixth VDS token faces the '|' (NHTSA matches the whole key).
        MatchCase{"MW1T88", kFord, false},
        MatchCase{"MW1T8*", kFord, true},
        // Formula keys read digits as '#'.
        MatchCase{"**#", kFord, true},       // position 6 is '1'
        MatchCase{"*#", kFord, false},       // position 5 is 'W'
        MatchCase{"**1", kFord, true},
        MatchCase{"[AB", kFord, false}));     // malformed: never

TEST(CompileKey, FormulaKeyTakesDigitsUnderHashes) {
  std::vector<uint64_t> pool;
  const CompiledKey key = CompileKey("**##", &pool);
  ASSERT_EQ(key.kind, CompiledKey::Kind::kFormula);
  EXPECT_EQ(key.formula_begin, 2);  // positions 6 and 7
  EXPECT_EQ(key.formula_length, 2);
}

TEST(CompileKey, NonStarLengthCountsEveryOtherCharacter) {
  std::vector<uint64_t> pool;
  EXPECT_EQ(CompileKey("*B[CF]*", &pool).non_star_length, 5);
  EXPECT_EQ(CompileKey("*****|*F", &pool).non_star_length, 2);
}

TEST(KeyTextLess, PunctuationThenDigitsThenLetters) {
  EXPECT_TRUE(KeyTextLess("*A", "1A"));
  EXPECT_TRUE(KeyTextLess("1A", "AA"));
  EXPECT_TRUE(KeyTextLess("*|", "1"));
  EXPECT_TRUE(KeyTextLess("AB", "ABC"));
  EXPECT_FALSE(KeyTextLess("B", "A"));
  EXPECT_EQ(StripBrackets("*[AB]C"), "*ABC");
}

}  // namespace
}  // namespace snapshot
