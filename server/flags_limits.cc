// What one caller, one connection and all of them together may hold, and
// how long a stop waits (--shutdown_grace, read by main).
// --help lists these flags under "limits (connections, memory, pending decodes,
// shutdown)" (server/flags.cc).

#include <algorithm>
#include <cstdint>

#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "server/flag_groups.h"
#include "server/flags.h"

ABSL_FLAG(int, max_streams_per_connection, 100,
          "concurrent calls (HTTP/2 streams) per client connection; further "
          "calls wait for a free one");
ABSL_FLAG(absl::Duration, max_connection_idle, absl::Minutes(30),
          "a client connection without calls for this long is closed");
ABSL_FLAG(int64_t, max_memory, int64_t{1} << 30,
          "bytes of buffer memory gRPC may use, all calls together");
ABSL_FLAG(int64_t, max_pending, 1000000,
          "decodes waiting at once, all callers together; beyond it, callers "
          "get RESOURCE_EXHAUSTED / OVERLOADED");
ABSL_FLAG(int, batch_window, 256,
          "items of one DecodeBatch stream (or /v1/decode:batch) in progress "
          "at once; the server reads no further while the window is full "
          "(backpressure)");
ABSL_FLAG(absl::Duration, shutdown_grace, absl::Seconds(10),
          "on SIGTERM/SIGINT, how long work in progress may finish");

namespace server {

// What one caller, one connection and all of them together may hold.
void LimitsFromFlags(ServerOptions& options) {
  options.batch_window = absl::GetFlag(FLAGS_batch_window);
  options.max_streams_per_connection =
      absl::GetFlag(FLAGS_max_streams_per_connection);
  options.max_connection_idle = absl::GetFlag(FLAGS_max_connection_idle);
  options.max_memory_bytes = absl::GetFlag(FLAGS_max_memory);
  options.engine.max_waiters = static_cast<size_t>(
      std::max<int64_t>(1, absl::GetFlag(FLAGS_max_pending)));
}

}  // namespace server
