// The server's logging: lines are formatted on the caller's thread and
// queued for one writer thread, behind a bounded queue that drops the oldest
// line when full, so that a stalled stdout never blocks the engine's loop or
// a gRPC thread; lines as text or JSON. The writer is woken only when the
// queue fills, for a warning or worse, or every 50 ms.
//
// Configured once in main (Init); Event may be called from any thread.
// gRPC's own log lines go the same way.
#ifndef VIN_SERVER_COMMON_LOG_H_
#define VIN_SERVER_COMMON_LOG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace server::log {

// A line's level, lowest first (--log_level names them; a line says
// "trace", "debug", "info", "warning", "error" or "critical").
enum class Level { kTrace, kDebug, kInfo, kWarn, kError, kCritical, kOff };

// A field of a line: text values are quoted in JSON, numbers are not.
struct Field {
  Field(std::string k, std::string v) : key(std::move(k)), text(std::move(v)) {}
  Field(std::string k, const char* v) : key(std::move(k)), text(v) {}
  Field(std::string k, int64_t v);
  Field(std::string k, int v) : Field(std::move(k), static_cast<int64_t>(v)) {}
  Field(std::string k, size_t v)
      : Field(std::move(k), static_cast<int64_t>(v)) {}
  Field(std::string k, double v);
  // A list of JSON objects (in text: a comma list of their values).
  static Field Objects(std::string k,
                       const std::vector<std::vector<Field>>& objects);

  std::string key;
  std::string text;  // the value as text
  std::string json;  // the value as JSON
};

// Starts the logger. `level`: trace, debug, info, warn, error, critical or
// off (the lowest level written); `format`: text or json. INVALID_ARGUMENT
// names a bad one.
absl::Status Init(const std::string& level, const std::string& format,
                  size_t queue_lines = 8192);
// Lines dropped because the queue was full (vin_log_dropped_total).
uint64_t Dropped();
// Writes out what is queued and stops the logger, waiting at most
// `timeout` (stdout may be stalled). Returns whether it finished; if not,
// the caller should leave with _exit, as the logger's thread cannot be
// joined. Later Events are dropped.
bool Stop(absl::Duration timeout);

// One line: `message` then the fields ("decode vin=1HG... attempts=1") in
// text; {"time":..., "level":..., "msg": message, field: value, ...} in JSON.
void Event(Level level, absl::string_view message,
           const std::vector<Field>& fields = {});

// `s` as a JSON string, as the JSON lines write it: quoted, escaped, and
// invalid UTF-8 replaced by U+FFFD.
std::string JsonString(absl::string_view s);

}  // namespace server::log

#endif  // VIN_SERVER_COMMON_LOG_H_
