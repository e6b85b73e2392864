// Input detection and record reading for `vinctl batch`.
#include "feed/feed.h"

#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace feed {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;

// Reads every record, failing the test on an error.
std::vector<FeedRecord> ReadAll(FeedReader& reader) {
  std::vector<FeedRecord> records;
  while (true) {
    auto next = reader.Next();
    EXPECT_TRUE(next.ok()) << next.status();
    if (!next.ok() || !next->has_value()) return records;
    records.push_back(**next);
  }
}

struct DetectCase {
  std::string name;
  std::string input;
  InputKind kind;
  std::vector<std::string> columns;
  size_t vin_column;
};

TEST(FeedDetect, Table) {
  const std::vector<DetectCase> cases = {
      {"header with VIN in the middle",
       "stock,VIN,price\nS1,1FT,5\n",
       InputKind::kCsv,
       {"stock", "VIN", "price"},
       1},
      {"lower case, padded",
       "  vin  ,x\n",
       InputKind::kCsv,
       {"  vin  ", "x"},
       0},
      {"quoted header",
       "\"Stock, #\",\"Vin\"\n",
       InputKind::kCsv,
       {"Stock, #", "Vin"},
       1},
      {"single VIN column", "VIN\r\n1FT\r\n", InputKind::kCsv, {"VIN"}, 0},
      {"blank lines before the header",
       "\n  \nid,vin\n",
       InputKind::kCsv,
       {"id", "vin"},
       1},
      {"byte-order mark",
       "\xEF\xBB\xBFVIN,stock\n",
       InputKind::kCsv,
       {"VIN", "stock"},
       0},
      {"plain list",
       "1FTMW1T88MFA00001\n1HGCM82633A004352\n",
       InputKind::kPlainList,
       {"vin"},
       0},
      {"header without a VIN column",
       "stock,vin_number\nS1,1FT\n",
       InputKind::kPlainList,
       {"vin"},
       0},
      {"empty input", "", InputKind::kPlainList, {"vin"}, 0},
  };
  for (const auto& c : cases) {
    std::istringstream in(c.input);
    auto reader = FeedReader::Open(&in);
    ASSERT_TRUE(reader.ok()) << c.name << ": " << reader.status();
    EXPECT_EQ((*reader)->kind(), c.kind) << c.name;
    EXPECT_EQ((*reader)->columns(), c.columns) << c.name;
    EXPECT_EQ((*reader)->vin_column(), c.vin_column) << c.name;
  }
}

TEST(FeedRead, CsvRowsKeepEveryFieldAndFindTheVin) {
  std::istringstream in(
      "stock,VIN,price\r\n"
      "S-1,1FTMW1T88MFA00001,\"31,500\"\r\n"
      "\r\n"
      "S-2,,9\r\n"
      "S-3, 1hgcm82633a004352 \r\n");
  auto reader = FeedReader::Open(&in);
  ASSERT_TRUE(reader.ok());
  auto records = ReadAll(**reader);
  ASSERT_EQ(records.size(), 3u) << "the blank line is not a record";
  EXPECT_EQ(records[0].index, 0);
  EXPECT_THAT(records[0].fields,
              ElementsAre("S-1", "1FTMW1T88MFA00001", "31,500"));
  EXPECT_EQ(records[0].vin, "1FTMW1T88MFA00001");
  EXPECT_EQ(records[1].index, 1);
  EXPECT_EQ(records[1].vin, "") << "an empty VIN is still a record";
  EXPECT_TRUE(records[1].problem.empty());
  EXPECT_THAT(records[2].fields, ElementsAre("S-3", " 1hgcm82633a004352 ", ""))
      << "a short row is padded";
  EXPECT_EQ(records[2].vin, " 1hgcm82633a004352 ") << "sent as read";
}

TEST(FeedRead, PlainListSkipsBlankLinesAndTrims) {
  std::istringstream in("1FTMW1T88MFA00001\r\n\n  1HGCM82633A004352  \n\n");
  auto reader = FeedReader::Open(&in);
  ASSERT_TRUE(reader.ok());
  auto records = ReadAll(**reader);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].vin, "1FTMW1T88MFA00001");
  EXPECT_THAT(records[0].fields, ElementsAre("1FTMW1T88MFA00001"));
  EXPECT_EQ(records[1].index, 1);
  EXPECT_EQ(records[1].vin, "1HGCM82633A004352");
}

TEST(FeedRead, AStrayQuoteInAPlainListSwallowsNoRow) {
  // A plain list is not CSV: a quote is part of its line, not the start of
  // a quoted field that runs on over the following lines.
  std::istringstream in(
      "1FTMW1T88MFA00001\n\"1HGCM82633A004352\n5YJ3E1EA7KF317000\n"
      "1HGCM82633A00435\"2\n1FTMW1T88MFA00001\n");
  auto reader = FeedReader::Open(&in);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->kind(), InputKind::kPlainList);
  auto records = ReadAll(**reader);
  ASSERT_EQ(records.size(), 5u) << "one record a line";
  EXPECT_EQ(records[1].vin, "\"1HGCM82633A004352");
  EXPECT_EQ(records[2].vin, "5YJ3E1EA7KF317000");
  EXPECT_EQ(records[3].vin, "1HGCM82633A00435\"2");
  EXPECT_EQ(records[4].vin, "1FTMW1T88MFA00001");
}

TEST(FeedRead, ARowOver64KiBIsABadRowTheNextOnesAreRead) {
  std::istringstream in("vin,notes\n1FTMW1T88MFA00001," +
                        std::string(70 * 1024, 'n') +
                        "\n1HGCM82633A004352,short\n");
  auto reader = FeedReader::Open(&in);
  ASSERT_TRUE(reader.ok());
  auto records = ReadAll(**reader);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_THAT(records[0].problem,
              HasSubstr("line 2 is 71698 bytes, over the 65536"));
  EXPECT_TRUE(records[1].problem.empty());
  EXPECT_EQ(records[1].vin, "1HGCM82633A004352");
}

// What reading the second record of `text` says (the first must read).
absl::Status SecondRecordStatus(const std::string& text) {
  std::istringstream in(text);
  auto reader = FeedReader::Open(&in);
  if (!reader.ok()) return reader.status();
  if (!(*reader)->Next().ok())
    return absl::InternalError("first record failed");
  return (*reader)->Next().status();
}

TEST(FeedRead, APhysicalLineHasASizeLimit) {
  // A file that is not a feed (one huge line) is refused, not held whole.
  const absl::Status s =
      SecondRecordStatus("1FTMW1T88MFA00001\n" + std::string(3 << 20, 'x'));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("line 2 is longer than"));
}

TEST(FeedRead, LongRowIsABadRowButTrailingEmptyFieldsAreDropped) {
  std::istringstream in(
      "vin,stock\n"
      "1FTMW1T88MFA00001,S1,,\n"
      "1HGCM82633A004352,S2,extra\n");
  auto reader = FeedReader::Open(&in);
  ASSERT_TRUE(reader.ok());
  auto records = ReadAll(**reader);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_TRUE(records[0].problem.empty());
  EXPECT_THAT(records[0].fields, ElementsAre("1FTMW1T88MFA00001", "S1"));
  EXPECT_THAT(records[1].problem, HasSubstr("line 3 has 3 fields"));
  EXPECT_THAT(records[1].fields, ElementsAre("1HGCM82633A004352", "S2"));
}

TEST(FeedRead, VinThatIsNotUtf8IsABadRow) {
  std::istringstream in("vin,x\n1FT\xff,1\n");
  auto reader = FeedReader::Open(&in);
  ASSERT_TRUE(reader.ok());
  auto records = ReadAll(**reader);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_THAT(records[0].problem, HasSubstr("not valid UTF-8"));
}

TEST(FeedRead, MalformedCsvNamesTheLine) {
  const absl::Status s = SecondRecordStatus("vin,x\n1FT,1\n1HG,\"open\n");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("line 3"));
}

}  // namespace
}  // namespace feed
