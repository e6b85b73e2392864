// CSV records: parsing, formatting, round trips, and reading from a stream.
#include "feed/csv.h"

#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace feed {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;
using Fields = std::vector<std::string>;

struct ParseCase {
  std::string name;
  std::string text;
  Fields fields;
};

TEST(CsvParse, Table) {
  const std::vector<ParseCase> cases = {
      {"plain", "a,b,c", {"a", "b", "c"}},
      {"empty line is one empty field", "", {""}},
      {"empty fields", ",,", {"", "", ""}},
      {"trailing comma", "a,", {"a", ""}},
      {"quoted comma", "12,\"1,234\",x", {"12", "1,234", "x"}},
      {"escaped quote", "\"say \"\"hi\"\"\",b", {"say \"hi\"", "b"}},
      {"only a quote", "\"\"\"\"", {"\""}},
      {"empty quoted field", "\"\",b", {"", "b"}},
      {"line break inside quotes", "\"a\nb\",c", {"a\nb", "c"}},
      {"CRLF inside quotes kept", "\"a\r\nb\"", {"a\r\nb"}},
      {"spaces kept", " a , b ", {" a ", " b "}},
      {"quote inside unquoted field is literal", "ab\"c,d", {"ab\"c", "d"}},
      {"text after closing quote kept", "\"ab\"c,d", {"abc", "d"}},
      {"unicode", "Škoda,\"Zürich, CH\"", {"Škoda", "Zürich, CH"}},
  };
  for (const auto& c : cases) {
    auto fields = ParseCsvRecord(c.text);
    ASSERT_TRUE(fields.ok()) << c.name << ": " << fields.status();
    EXPECT_EQ(*fields, c.fields) << c.name;
  }
}

TEST(CsvParse, UnterminatedQuoteIsAnError) {
  auto fields = ParseCsvRecord("a,\"b,c");
  ASSERT_FALSE(fields.ok());
  EXPECT_EQ(fields.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(fields.status().message()), HasSubstr("column 2"));
}

struct FormatCase {
  Fields fields;
  std::string text;
};

TEST(CsvFormat, QuotesOnlyWhenNeeded) {
  const std::vector<FormatCase> cases = {
      {{"a", "b"}, "a,b"},
      {{"1,234"}, "\"1,234\""},
      {{"say \"hi\""}, "\"say \"\"hi\"\"\""},
      {{"a\nb", "c"}, "\"a\nb\",c"},
      {{"a\rb"}, "\"a\rb\""},
      {{"", "", ""}, ",,"},
      {{" padded "}, " padded "},
      {{""}, ""},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(FormatCsvRecord(c.fields), c.text);
  }
}

TEST(CsvRoundTrip, FormatThenParseGivesTheFieldsBack) {
  const std::vector<Fields> cases = {
      {"a", "b", "c"},
      {"1,234.50", "x"},
      {"\"", "\"\"", "a\"b"},
      {"line1\nline2", "crlf\r\nline"},
      {"", "", "x", ""},
      {" lead", "trail ", " both "},
      {"VIN", "stock #", "price, USD"},
  };
  for (const auto& fields : cases) {
    auto back = ParseCsvRecord(FormatCsvRecord(fields));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, fields);
  }
}

TEST(CsvRoundTrip, MinimallyQuotedTextComesBackByteForByte) {
  const std::vector<std::string> lines = {
      "S-1001,1FTMW1T88MFA00001,\"31,500\"",
      "\"He said \"\"no\"\"\",,x",
      "a,\"multi\nline\",b",
  };
  for (const auto& line : lines) {
    auto fields = ParseCsvRecord(line);
    ASSERT_TRUE(fields.ok());
    EXPECT_EQ(FormatCsvRecord(*fields), line);
  }
}

TEST(CsvRecordReader, JoinsQuotedLineBreaksAndDropsCrlf) {
  std::istringstream in(
      "h1,h2\r\n"
      "a,\"two\r\nlines\"\r\n"
      "\r\n"
      "b,\"x\"\"y\"\r\n"
      "last,no newline");
  CsvRecordReader reader(&in);
  std::vector<std::string> raw;
  std::vector<int64_t> lines;
  while (true) {
    auto next = reader.NextRaw();
    ASSERT_TRUE(next.ok()) << next.status();
    if (!next->has_value()) break;
    raw.push_back(**next);
    lines.push_back(reader.line_number());
  }
  EXPECT_THAT(raw, ElementsAre("h1,h2", "a,\"two\r\nlines\"", "",
                               "b,\"x\"\"y\"", "last,no newline"));
  EXPECT_THAT(lines, ElementsAre(1, 2, 4, 5, 6));
  EXPECT_EQ(reader.bytes_read(), static_cast<int64_t>(in.str().size()));
}

TEST(CsvRecordReader, QuoteOpenAtTheEndIsAnErrorNamingTheLine) {
  std::istringstream in("vin\n1FT\n\"open,\nstill open\n");
  CsvRecordReader reader(&in);
  ASSERT_TRUE(reader.NextRaw().ok());
  ASSERT_TRUE(reader.NextRaw().ok());
  auto next = reader.NextRaw();
  ASSERT_FALSE(next.ok());
  EXPECT_THAT(std::string(next.status().message()), HasSubstr("line 3"));
}

TEST(CsvRecordReader, EndsInsideQuotesFollowsFieldStarts) {
  EXPECT_TRUE(EndsInsideQuotes("a,\"b"));
  EXPECT_FALSE(EndsInsideQuotes("a,\"b\""));
  EXPECT_FALSE(EndsInsideQuotes("ab\"c"));  // a literal quote, not an opening
  EXPECT_TRUE(EndsInsideQuotes("\"x\"\"y"));
}

}  // namespace
}  // namespace feed
