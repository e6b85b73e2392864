// The log: read by main before anything else (server/log.h).
// --help lists these flags under "logging (level, format, queue)"
// (server/flags.cc).

#include <cstdint>
#include <string>

#include "absl/flags/flag.h"
#include "server/flags.h"

ABSL_FLAG(std::string, log_level, "info",
          "trace, debug, info, warn, error, critical or off");
ABSL_FLAG(std::string, log_format, "text",
          "text, or json (one JSON object per line)");
ABSL_FLAG(int64_t, log_queue_lines, 8192,
          "log lines waiting for stdout at most; beyond it lines are dropped "
          "(and counted), never waited for");
