// Rule 21: a live answer's open model years, from the VIN's position 10 and
// vPIC's own remark that its year may be incorrect.
#include "engine/model_year_candidates.h"

#include "gtest/gtest.h"

namespace engine {
namespace {

domain::Vehicle Answer(int year, const std::string& remark) {
  domain::Vehicle v;
  v.model_year = year;
  if (!remark.empty()) v.attributes["AdditionalErrorText"] = remark;
  return v;
}

constexpr char kRemark[] =
    "Unused position(s): 8; The Model Year decoded for this VIN may be "
    "incorrect. If you know the Model year, please enter it and decode again "
    "to get more accurate information.";

TEST(LiveModelYearCandidates, VpicsRemarkGivesBothReadingsOfPositionTen) {
  // 'G' is 1986 or 2016.
  const auto c = LiveModelYearCandidates("4RKYLA208GA000001",
                                         Answer(2016, kRemark), 1980, 2028);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0], (domain::ModelYearCandidate{2016, "vpic", true}));
  EXPECT_EQ(c[1], (domain::ModelYearCandidate{1986, "30_year_cycle", false}));
  // vPIC chose the older one: it comes first, the newer is the other.
  const auto older = LiveModelYearCandidates("4RKYLA208GA000001",
                                             Answer(1986, kRemark), 1980, 2028);
  ASSERT_EQ(older.size(), 2u);
  EXPECT_EQ(older[0].model_year, 1986);
  EXPECT_EQ(older[1].model_year, 2016);
}

TEST(LiveModelYearCandidates, NoneWithoutTheRemarkOrASecondYear) {
  EXPECT_TRUE(
      LiveModelYearCandidates("4RKYLA208GA000001", Answer(2016, ""), 1980, 2028)
          .empty());
  EXPECT_TRUE(LiveModelYearCandidates("4RKYLA208GA000001",
                                      Answer(2016, "Unused position(s): 8;"),
                                      1980, 2028)
                  .empty());
  // 'W' is 1998 or 2028; with 2028 beyond the last year there is one.
  EXPECT_TRUE(LiveModelYearCandidates("JNELC00X6W0000001",
                                      Answer(1998, kRemark), 1980, 2027)
                  .empty());
  // vPIC's year is not one position 10 stands for: nothing is made up.
  EXPECT_TRUE(LiveModelYearCandidates("4RKYLA208GA000001",
                                      Answer(2015, kRemark), 1980, 2028)
                  .empty());
  EXPECT_TRUE(
      LiveModelYearCandidates("4RKYLA208", Answer(2016, kRemark), 1980, 2028)
          .empty());
}

}  // namespace
}  // namespace engine
