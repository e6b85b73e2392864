// vin-server's command-line flags (the table in README.md "Server flags"),
// defined by concern in server/flags_<group>.cc, and the server options they
// make. main.cc reads the logging and stopping flags itself; everything else
// reaches the server through OptionsFromFlags.
#ifndef VIN_SERVER_FLAGS_H_
#define VIN_SERVER_FLAGS_H_

#include <cstdint>
#include <string>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/server.h"

ABSL_DECLARE_FLAG(std::string, log_level);
ABSL_DECLARE_FLAG(std::string, log_format);
ABSL_DECLARE_FLAG(int64_t, log_queue_lines);
ABSL_DECLARE_FLAG(absl::Duration, shutdown_grace);
ABSL_DECLARE_FLAG(int64_t, fd_reserve);

namespace server {

// The server's options from the flags; INVALID_ARGUMENT names a bad one.
absl::StatusOr<ServerOptions> OptionsFromFlags();

// For --help (absl::FlagsUsageConfig::normalize_filename): the title of the
// group of one of the server's flag files ("server/flags_upstream.cc" ->
// "upstream (vPIC, rate, retries, breaker)"); any other file as abseil names
// it (without leading slashes).
std::string FlagFileTitle(absl::string_view file);
// Whether a flag's Filename() (a group's title once FlagFileTitle is in use,
// else the path) is one of the server's flag files: --help lists those, and
// VIN_<FLAG> variables set only those.
bool IsServerFlagFile(absl::string_view file);

}  // namespace server

#endif  // VIN_SERVER_FLAGS_H_
