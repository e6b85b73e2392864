// Snapshot::Suggest (rule 21): corrections of a VIN with one wrong
// character, on the real snapshot. The oracle for rule 2 is Decode itself:
// a VIN qualifies as a suggestion exactly when its own decode carries none
// of the codes 1 (check digit), 7 (unknown WMI), 8 (no pattern) and 400
// (a character not allowed where it stands).
#include <algorithm>
#include <iostream>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "snapshot/snapshot.h"
#include "test_snapshot.h"
#include "vin/vin.h"

namespace snapshot {
namespace {

using ::snapshot::testing::SharedSnapshot;
using ::testing::Contains;
using ::testing::IsEmpty;

constexpr int kReferenceYear = 2026;
constexpr size_t kAll = 1000;
constexpr char kInputChars[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

// The VINs the decode tests use (snapshot_decode_test.cc; the first is
// vPIC's own answer in tests/fixtures/vpic/decode-vin.json): cars and light
// trucks, a six-character WMI, a bus and a heavy truck.
const char* const kFixtureVins[] = {
    "1FTMW1T88MFA00001", "1FTFW5L86RFB45612", "1FTFW4L86RFA86622",
    "1F9T00009EA434001", "4RKYLA208GA000001", "JNELC00X6W0000001",
};

std::vector<std::string> Suggest(const std::string& vin, size_t max = kAll) {
  auto snapshot = SharedSnapshot();
  if (snapshot == nullptr) return {};
  return snapshot->Suggest(vin, kReferenceYear, max);
}

// Rule 2 for `vin` as a candidate, by its decode.
bool Qualifies(const std::string& vin) {
  auto snapshot = SharedSnapshot();
  if (snapshot == nullptr) return false;
  absl::StatusOr<SnapshotDecode> d = snapshot->Decode(vin, 0, kReferenceYear);
  if (!d.ok()) return false;
  for (const vpic::Note& n : d->notes) {
    if (n.code == "1" || n.code == "7" || n.code == "8" || n.code == "400") {
      return false;
    }
  }
  return true;
}

// Every VIN one VIN character away from `input` that qualifies.
std::set<std::string> BruteForce(const std::string& input) {
  std::set<std::string> out;
  for (int p = 0; p < 17; ++p) {
    for (char c : std::string("0123456789ABCDEFGHJKLMNPRSTUVWXYZ")) {
      if (c == input[p]) continue;
      std::string v = input;
      v[p] = c;
      if (Qualifies(v)) out.insert(v);
    }
  }
  return out;
}

// A character that looks like `c`, one next to it on the keyboard, and a
// random one, each different from `c` (I, O and Q included).
std::vector<char> Substitutes(char c, std::mt19937* rng) {
  static const std::vector<std::string> kLookAlikes = {
      "O0QD", "I1L", "S5", "B8", "Z2", "G6", "UV"};
  static const std::vector<std::string> kRows = {"1234567890", "QWERTYUIOP",
                                                 "ASDFGHJKL", "ZXCVBNM"};
  std::vector<char> out;
  for (const std::string& group : kLookAlikes) {
    if (group.find(c) == std::string::npos) continue;
    for (char other : group) {
      if (other != c) {
        out.push_back(other);
        break;
      }
    }
  }
  for (const std::string& row : kRows) {
    const size_t i = row.find(c);
    if (i != std::string::npos)
      out.push_back(row[i + 1 < row.size() ? i + 1 : i - 1]);
  }
  char random;
  do {
    random = kInputChars[(*rng)() % (sizeof(kInputChars) - 1)];
  } while (random == c);
  out.push_back(random);
  return out;
}

TEST(Suggest, FindsTheOriginalOfEveryOneCharacterTypo) {
  SKIP_WITHOUT_SNAPSHOT();
  std::mt19937 rng(21);
  int typos = 0, first = 0, top10 = 0;
  for (const std::string original : kFixtureVins) {
    const bool qualifies = Qualifies(original);
    EXPECT_TRUE(qualifies) << original << " no longer decodes clean";
    for (int p = 0; p < 17; ++p) {
      for (char c : Substitutes(original[p], &rng)) {
        std::string typo = original;
        typo[p] = c;
        SCOPED_TRACE(typo);
        const std::vector<std::string> list = Suggest(typo);
        const auto it = std::find(list.begin(), list.end(), original);
        EXPECT_EQ(it != list.end(), qualifies)
            << "position " << p + 1 << ": " << original[p] << " -> " << c;
        ++typos;
        first += it == list.begin() && it != list.end();
        top10 += it != list.end() && it - list.begin() < 10;
      }
    }
  }
  std::cout << "[ SUGGEST  ] " << typos << " typos of "
            << std::size(kFixtureVins) << " fixture VINs: original first in "
            << first << ", in the top 10 in " << top10 << "\n";
}

TEST(Suggest, ListsExactlyTheVinsOneChangeAwayThatDecode) {
  SKIP_WITHOUT_SNAPSHOT();
  for (const std::string typo :
       {"1FTMW1T88MFA00002", "1FTMW1T88MFA0O001", "1FTMW1T87MFA00001",
        "4RKYLA2O8GA000001", "1F9T00009EA434X01", "JNELC00X6W0000O01"}) {
    SCOPED_TRACE(typo);
    const std::vector<std::string> list = Suggest(typo);
    EXPECT_THAT(list, ::testing::Not(IsEmpty()));
    EXPECT_EQ(std::set<std::string>(list.begin(), list.end()),
              BruteForce(typo));
  }
}

TEST(Suggest, AnOInADigitPositionGivesTheZeroFirst) {
  SKIP_WITHOUT_SNAPSHOT();
  for (const std::string original :
       {"1FTMW1T88MFA00001", "4RKYLA208GA000001"}) {
    for (int p = 11; p < 17; ++p) {
      if (original[p] != '0') continue;
      std::string typo = original;
      typo[p] = 'O';
      SCOPED_TRACE(typo);
      const std::vector<std::string> list = Suggest(typo, 5);
      ASSERT_THAT(list, ::testing::Not(IsEmpty()));
      EXPECT_EQ(list[0], original);
    }
  }
}

TEST(Suggest, AWrongCheckDigitAloneListsTheRightOne) {
  SKIP_WITHOUT_SNAPSHOT();
  for (const std::string original : kFixtureVins) {
    for (char wrong : std::string("0123456789X")) {
      if (wrong == original[8]) continue;
      std::string typo = original;
      typo[8] = wrong;
      EXPECT_THAT(Suggest(typo), Contains(original)) << typo;
    }
  }
}

TEST(Suggest, EverySuggestionIsAValidVinOneCharacterAway) {
  SKIP_WITHOUT_SNAPSHOT();
  for (const std::string typo :
       {"1FTMW1T88MFA00002", "1FTMW1T88MFA0O001", "1FTFW5L86RFB4S612",
        "1HGCM82633A0043S2", "4RKYLA208GA000007", "1F9T00009EA434Q01"}) {
    SCOPED_TRACE(typo);
    const std::vector<std::string> list = Suggest(typo);
    EXPECT_EQ(Suggest(typo), list) << "not deterministic";
    for (const std::string& s : list) {
      ASSERT_EQ(s.size(), 17u) << s;
      int differences = 0;
      for (int i = 0; i < 17; ++i) differences += s[i] != typo[i];
      EXPECT_EQ(differences, 1) << s;
      EXPECT_EQ(vin::ComputeCheckDigit(s), s[8]) << s;
      EXPECT_TRUE(vin::Validate(s, vin::CheckDigitPolicy::kEnforce).ok()) << s;
    }
  }
}

TEST(Suggest, HonoursMaxKeepingTheOrder) {
  SKIP_WITHOUT_SNAPSHOT();
  const std::string typo = "1FTMW1T88MFA00002";
  const std::vector<std::string> all = Suggest(typo);
  ASSERT_GE(all.size(), 3u);
  EXPECT_EQ(Suggest(typo, 2),
            std::vector<std::string>(all.begin(), all.begin() + 2));
  EXPECT_THAT(Suggest(typo, 0), IsEmpty());
}

TEST(Suggest, NoneForInputThatIsNoNormalisedVin) {
  SKIP_WITHOUT_SNAPSHOT();
  for (const std::string bad :
       {"", "1FTMW1T88MFA0000", "1FTMW1T88MFA000012", "1FTMW1T88-FA00001",
        "1ftmw1t88mfa00002", "1FTMW1T88MFA0000 "}) {
    EXPECT_THAT(Suggest(bad), IsEmpty()) << "'" << bad << "'";
  }
}

TEST(Suggest, NoneForAnUnknownWmiTypoedInTheSerial) {
  SKIP_WITHOUT_SNAPSHOT();
  const std::string typo = "AAAAA1118GA000002";  // WMI AAA: unknown (code 7)
  ASSERT_THAT(BruteForce(typo), IsEmpty());
  EXPECT_THAT(Suggest(typo), IsEmpty());
}

}  // namespace
}  // namespace snapshot
