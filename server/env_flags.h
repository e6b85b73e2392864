// The server's flags from the environment (README "Configuration"): each
// VIN_<FLAG> variable (VIN_UPSTREAM_RATE=500) is --<flag>=<value>, put
// before the command line's flags so that those win. Variables whose name
// is no flag of `is_flag` are left alone (other tools use the prefix too).
#ifndef VIN_SERVER_ENV_FLAGS_H_
#define VIN_SERVER_ENV_FLAGS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace server {

inline constexpr char kEnvPrefix[] = "VIN_";

// "--flag=value" for every `environ`-style entry ("NAME=value") that is
// VIN_<FLAG> with is_flag("flag") true, in the order given.
std::vector<std::string> FlagsFromEnvironment(
    const char* const* environment,
    const std::function<bool(absl::string_view)>& is_flag);

}  // namespace server

#endif  // VIN_SERVER_ENV_FLAGS_H_
