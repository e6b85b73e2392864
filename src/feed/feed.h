// The input of `vinctl batch`: input detection and reading records.
//
// The first non-empty line decides the kind of input. If it parses as a CSV
// record and one of its fields, trimmed, equals "vin" in any case, the input
// is CSV with that line as its header (the first such column is the VIN
// column; every column is passed through). Otherwise the input is a plain
// list: every non-empty line, trimmed, is one VIN, and the only column is
// "vin". Blank lines are skipped in both kinds (they are not records); in CSV,
// a row whose VIN field is empty is a record. A UTF-8 byte-order mark before
// the first line is ignored. CRLF line ends are accepted.
#ifndef VIN_FEED_FEED_H_
#define VIN_FEED_FEED_H_

#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/optional.h"
#include "feed/csv.h"

namespace feed {

enum class InputKind { kCsv, kPlainList };

struct FeedRecord {
  int64_t index = 0;                // 0-based position among the records
  std::vector<std::string> fields;  // one value per column, as read
  std::string vin;                  // the VIN column's value, as read
  // Non-empty when the row cannot be sent as read (a CSV row with more
  // non-empty fields than the header has columns, or a VIN that is not valid
  // UTF-8): the record is reported failed (BAD_ROW) with this message and its
  // first columns() fields, and is not sent. Empty extra fields (trailing
  // commas) are dropped silently.
  std::string problem;
};

// Reads records from a stream. Not thread-safe; one owner.
class FeedReader {
 public:
  // A longer row is a BAD_ROW record, failed locally and never sent.
  static constexpr size_t kMaxRowBytes = 64 * 1024;

  // Reads up to the first non-empty line to detect the input kind. `in` must
  // outlive the reader. Errors as CsvRecordReader::NextRaw.
  static absl::StatusOr<std::unique_ptr<FeedReader>> Open(std::istream* in);

  InputKind kind() const { return kind_; }
  // The header's columns as read (CSV), or {"vin"} (plain list).
  const std::vector<std::string>& columns() const { return columns_; }
  // Index of the VIN column in columns().
  size_t vin_column() const { return vin_column_; }

  // The next record, or nullopt at the end of input. A CSV row with fewer
  // fields than the header is padded with empty fields. INVALID_ARGUMENT (with
  // the line number) for malformed CSV; DATA_LOSS when reading fails.
  absl::StatusOr<absl::optional<FeedRecord>> Next();

  // Bytes consumed from the stream so far.
  int64_t bytes_read() const { return lines_.bytes_read(); }

 private:
  explicit FeedReader(std::istream* in) : lines_(in) {}

  // The next non-blank raw record (BOM removed from the first), or nullopt.
  absl::StatusOr<absl::optional<std::string>> NextNonBlank();

  CsvRecordReader lines_;
  InputKind kind_ = InputKind::kPlainList;
  std::vector<std::string> columns_;
  size_t vin_column_ = 0;
  int64_t next_index_ = 0;
  bool first_line_ = true;
  // Whether records may span lines (CSV after its header; never in a plain
  // list, nor for the first line, which decides the kind).
  bool quoted_ = false;
  // A plain list's first line, read during detection and not yet returned.
  absl::optional<std::string> pending_;
};

}  // namespace feed

#endif  // VIN_FEED_FEED_H_
