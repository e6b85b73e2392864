// vin-server's command-line flags (the table in README.md "Server flags")
// and the server options they make. main.cc reads the logging and stopping
// flags itself; everything else reaches the server through OptionsFromFlags.
#ifndef VIN_SERVER_FLAGS_H_
#define VIN_SERVER_FLAGS_H_

#include <cstdint>
#include <string>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
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

}  // namespace server

#endif  // VIN_SERVER_FLAGS_H_
