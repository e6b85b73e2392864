// CSV records (RFC 4180) for vinctl: parsing one record, formatting one
// record, and reading records line by line from a stream.
//
// Parsing is lenient where RFC 4180 is strict and no data is lost by it: a
// quote inside an unquoted field and text after a closing quote are kept as
// literal characters. A quoted field may contain commas, doubled quotes ("")
// and line breaks. A record's terminating CRLF or LF is not part of it.
#ifndef VIN_FEED_CSV_H_
#define VIN_FEED_CSV_H_

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/optional.h"

namespace feed {

// Splits one record (without its line terminator) into its field values.
// "" is one empty field. INVALID_ARGUMENT when a quoted field is not closed.
// Pure; safe from any thread.
absl::StatusOr<std::vector<std::string>> ParseCsvRecord(absl::string_view text);

// Formats `fields` as one record without a line terminator. A field is quoted
// (with inner quotes doubled) only when it contains a comma, a quote, CR or
// LF, so fields that were minimally quoted come back byte for byte. Pure.
std::string FormatCsvRecord(const std::vector<std::string>& fields);

// Whether `text` ends inside a quoted field (one that opened at the start of
// a field and has not been closed), so the record continues on the next line.
bool EndsInsideQuotes(absl::string_view text);

// Reads logical CSV records from a stream: physical lines are joined while a
// quoted field is open. Not thread-safe; one owner.
class CsvRecordReader {
 public:
  // Longest logical record accepted; longer means a runaway quote.
  static constexpr size_t kMaxRecordBytes = 1 << 20;

  // `in` must outlive the reader.
  explicit CsvRecordReader(std::istream* in) : in_(in) {}

  // The next logical record's raw text (line terminators between physical
  // lines of a quoted field kept, the final CRLF/LF dropped), or nullopt at
  // the end of input. INVALID_ARGUMENT for a quote left open at the end of
  // input or a record (or one physical line) over kMaxRecordBytes;
  // DATA_LOSS when the stream fails. With `quoted` false, a record is one
  // physical line whatever quotes it holds (a plain VIN list is not CSV).
  absl::StatusOr<absl::optional<std::string>> NextRaw(bool quoted = true);

  // 1-based physical line number where the last record returned started.
  int64_t line_number() const { return record_line_; }
  // Bytes consumed from the stream so far (line terminators included).
  int64_t bytes_read() const { return bytes_read_; }

 private:
  std::istream* const in_;
  int64_t lines_read_ = 0;
  int64_t record_line_ = 0;
  int64_t bytes_read_ = 0;
};

}  // namespace feed

#endif  // VIN_FEED_CSV_H_
