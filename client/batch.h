// `vinctl batch`: streams a feed through DecodeBatch and writes one output
// record per input record, in input order.
//
// Records are sent with request_id = their 0-based index. At most `window`
// records are between the oldest record not yet written out and the newest
// one sent (in flight at the server, or finished and waiting for an earlier
// one), so memory stays bounded however long the feed is.
#ifndef VIN_CLIENT_BATCH_H_
#define VIN_CLIENT_BATCH_H_

#include <cstdint>
#include <istream>
#include <ostream>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/progress.h"
#include "feed/result_writer.h"
#include "vin/v1/vin.grpc.pb.h"

namespace vinctl {

// Exit statuses of vinctl.
inline constexpr int kExitOk = 0;           // every item decoded
inline constexpr int kExitItemsFailed = 1;  // at least one item failed
inline constexpr int kExitError = 2;        // usage, I/O, connection, stream

struct BatchOptions {
  feed::OutputFormat format = feed::OutputFormat::kCsv;
  int32_t model_year = 0;         // sent with every item; 0 = no hint
  bool warn_check_digit = false;  // CHECK_DIGIT_POLICY_WARN for every item
  // Rule 17: every item's priority (unspecified: the server's, bulk), and
  // the tenant sent as the x-vin-tenant header ("" none).
  vin::v1::Priority priority = vin::v1::PRIORITY_UNSPECIFIED;
  std::string tenant;
  int window = 512;               // >= 1; see the file comment
  absl::Duration deadline = absl::ZeroDuration();  // whole stream; 0 = none
  // Upper bound of a uniformly random delay before the stream starts.
  absl::Duration stagger = absl::ZeroDuration();
  // Whether to keep a progress line on `progress` (a terminal).
  bool show_progress = false;
  absl::Duration progress_interval = absl::Milliseconds(200);
  int64_t input_size = 0;  // bytes of input when known, for the ETA
};

// Runs one batch: reads `in` (see feed.h), writes `out` (see
// result_writer.h), and writes the progress line (if asked) and always the
// summary line to `progress`. Every record read gets exactly one output
// record: a terminal event's outcome, or failed with STREAM_ENDED when the
// stream ended without one, or BAD_ROW for a row that was not sent.
//
// Returns the summary, or an error when the run could not be completed:
// malformed input (INVALID_ARGUMENT, records before it are still finished and
// written), an output or input stream failure (DATA_LOSS), or a stream that
// did not end OK (its gRPC status). Blocks until done; uses two helper
// threads (event reader, progress).
absl::StatusOr<BatchSummary> RunBatch(
    const BatchOptions& options,
    vin::v1::VinDecoderService::StubInterface* stub, std::istream& in,
    std::ostream& out, std::ostream& progress);

// kExitOk, kExitItemsFailed or kExitError for RunBatch's answer.
int BatchExitCode(const absl::StatusOr<BatchSummary>& result);

}  // namespace vinctl

#endif  // VIN_CLIENT_BATCH_H_
