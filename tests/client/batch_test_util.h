// Helpers for the `vinctl batch` tests: RunBatch against the in-process
// server, and the CSV output parsed back into rows.
#ifndef VIN_TESTS_CLIENT_BATCH_TEST_UTIL_H_
#define VIN_TESTS_CLIENT_BATCH_TEST_UTIL_H_

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "client/batch.h"
#include "feed/csv.h"
#include "gtest/gtest.h"
#include "testing/server_fixture.h"

namespace vinctl {
namespace testing_batch {

inline constexpr char kFord[] = "1FTMW1T88MFA00001";
inline constexpr char kHonda[] = "1HGCM82633A004352";
inline constexpr char kBuick[] = "1G4AH59H45G118341";
inline constexpr char kCheckX[] = "1M8GDM9AXKP042788";
inline constexpr char kBadCheckDigit[] = "1HGCM82643A004352";

// An output row, by column name.
class Row {
 public:
  Row(const std::vector<std::string>* header, std::vector<std::string> fields)
      : header_(header), fields_(std::move(fields)) {}
  const std::string& operator[](const std::string& column) const {
    for (size_t i = 0; i < header_->size(); ++i) {
      if ((*header_)[i] == column) return fields_.at(i);
    }
    ADD_FAILURE() << "no column " << column;
    static const std::string kNone;
    return kNone;
  }
  const std::vector<std::string>& fields() const { return fields_; }

 private:
  const std::vector<std::string>* header_;
  std::vector<std::string> fields_;
};

struct CsvOutput {
  std::vector<std::string> header;
  std::vector<std::string> lines;  // raw data lines
  std::vector<Row> rows;
};

inline CsvOutput ParseOutput(const std::string& text) {
  CsvOutput out;
  std::istringstream in(text);
  feed::CsvRecordReader reader(&in);
  bool first = true;
  while (true) {
    auto raw = reader.NextRaw();
    EXPECT_TRUE(raw.ok()) << raw.status();
    if (!raw.ok() || !raw->has_value()) break;
    auto fields = feed::ParseCsvRecord(**raw);
    EXPECT_TRUE(fields.ok()) << fields.status();
    if (first) {
      out.header = *fields;
      first = false;
      continue;
    }
    out.lines.push_back(**raw);
    out.rows.emplace_back(&out.header, *fields);
  }
  return out;
}

class BatchTest : public testing_util::ServerFixture {
 protected:
  absl::StatusOr<BatchSummary> Run(const std::string& input,
                                   BatchOptions options = {}) {
    return RunOn(stub_.get(), input, options);
  }
  absl::StatusOr<BatchSummary> RunOn(
      vin::v1::VinDecoderService::StubInterface* stub, const std::string& input,
      BatchOptions options) {
    if (options.deadline == absl::ZeroDuration()) {
      options.deadline = absl::Seconds(120);  // a hung test fails, not hangs
    }
    std::istringstream in(input);
    out_.str("");
    progress_.str("");
    return RunBatch(options, stub, in, out_, progress_);
  }

  std::ostringstream out_;
  std::ostringstream progress_;
};

}  // namespace testing_batch
}  // namespace vinctl

#endif  // VIN_TESTS_CLIENT_BATCH_TEST_UTIL_H_
