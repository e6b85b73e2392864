// The output of `vinctl batch`: one record per input record, as CSV or NDJSON.
//
// CSV: the input's columns (all of them, in order; "vin" for a plain list)
// followed by kResultColumns. NDJSON: one object per line,
//   {"input": {column: value, ...}, "request_id": "<index>",
//    "status": "done", "result": <vin.v1.DecodeResult>}
//   {"input": {...}, "request_id": "<index>", "status": "failed",
//    "failure_reason": "INVALID_VIN", "failure": <vin.v1.FailedEvent>}
// with the messages in protobuf's JSON mapping (proto field names).
#ifndef VIN_FEED_RESULT_WRITER_H_
#define VIN_FEED_RESULT_WRITER_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "vin/v1/vin.pb.h"

namespace feed {

enum class OutputFormat { kCsv, kNdjson };

// The columns vinctl appends to the input's columns in CSV output.
extern const std::vector<std::string> kResultColumns;

// How one record ended.
struct Outcome {
  bool done = false;
  vin::v1::DecodeResult result;  // when done
  vin::v1::FailedEvent failure;  // when failed
  // When failed: the FailureReason name without its prefix ("INVALID_VIN"),
  // or a client-side reason ("STREAM_ENDED", "BAD_ROW").
  std::string failure_reason;

  static Outcome Done(vin::v1::DecodeResult result);
  static Outcome Failed(vin::v1::FailedEvent failure);
  static Outcome ClientFailure(absl::string_view reason,
                               absl::string_view message);
};

// "INVALID_VIN" for FAILURE_REASON_INVALID_VIN, "UNSPECIFIED" for 0.
std::string FailureReasonName(vin::v1::FailureReason reason);

// Writes records to a stream. Not thread-safe; callers serialise.
class ResultWriter {
 public:
  // `out` must outlive the writer; `columns` are the input's columns.
  ResultWriter(OutputFormat format, std::vector<std::string> columns,
               std::ostream* out)
      : format_(format), columns_(std::move(columns)), out_(out) {}

  // The CSV header line (nothing for NDJSON).
  absl::Status WriteHeader();
  // One record: `fields` holds one value per input column.
  absl::Status Write(int64_t index, const std::vector<std::string>& fields,
                     const Outcome& outcome);
  absl::Status Flush();

 private:
  absl::Status Check();
  std::string CsvLine(const std::vector<std::string>& fields,
                      const Outcome& outcome) const;
  std::string JsonLine(int64_t index, const std::vector<std::string>& fields,
                       const Outcome& outcome) const;

  const OutputFormat format_;
  const std::vector<std::string> columns_;
  std::ostream* const out_;
};

}  // namespace feed

#endif  // VIN_FEED_RESULT_WRITER_H_
