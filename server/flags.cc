// vin-server's flags as a whole: the server options made from them
// (checked: a bad value is INVALID_ARGUMENT naming the flag, which main
// turns into a usage error), and the groups --help lists them in. The flags
// themselves are defined by concern in server/flags_<group>.cc.
#include "server/flags.h"

#include "absl/strings/match.h"
#include "server/flag_groups.h"
#include "server/common/log.h"

namespace server {
namespace {

struct FlagGroup {
  const char* file;   // where its flags are defined
  const char* title;  // what --help says ("Flags from <title>:")
};

// --help lists the groups in the order of their titles (abseil sorts them),
// so each title starts with the word it is found by. A title has no '/'
// (abseil would take what precedes it for a directory).
constexpr FlagGroup kFlagGroups[] = {
    {"server/flags_listen.cc",
     "listeners and TLS (gRPC, HTTP gateway, metrics)"},
    {"server/flags_limits.cc",
     "limits (connections, memory, pending decodes, shutdown)"},
    {"server/flags_upstream.cc", "upstream (vPIC, rate, retries, breaker)"},
    {"server/flags_tenants.cc",
     "tenants (identity, priority, fair share, peak hours)"},
    {"server/flags_cache.cc",
     "cache and snapshot (finished decodes, offline vPIC data)"},
    {"server/flags_http.cc",
     "gateway (HTTP deadline, threads, connections, hosts, CORS)"},
    {"server/flags_fleet.cc", "fleet (Redis shared by the replicas)"},
    {"server/flags_log.cc", "logging (level, format, queue)"},
    {"server/flags_jobs.cc",
     "jobs (bulk jobs: store, window, limits, notifications)"},
};

}  // namespace

std::string FlagFileTitle(absl::string_view file) {
  for (const FlagGroup& g : kFlagGroups) {
    if (absl::EndsWith(file, g.file)) return g.title;
  }
  // abseil's own normalisation: without leading slashes.
  const size_t start = file.find_first_not_of("\\/");
  return start == absl::string_view::npos ? std::string()
                                          : std::string(file.substr(start));
}

bool IsServerFlagFile(absl::string_view file) {
  for (const FlagGroup& g : kFlagGroups) {
    if (file == g.title || absl::EndsWith(file, g.file)) return true;
  }
  return false;
}

// The checks run in the order they always have (the first bad flag is the
// one reported).
absl::StatusOr<ServerOptions> OptionsFromFlags() {
  ServerOptions options;
  ListenersFromFlags(options);
  if (absl::Status s = CacheFromFlags(options); !s.ok()) return s;
  if (absl::Status s = HttpFromFlags(options.http); !s.ok()) return s;
  LimitsFromFlags(options);
  options.log_dropped = server::log::Dropped;
  if (absl::Status s = FleetFromFlags(options.fleet); !s.ok()) return s;
  UpstreamFromFlags(options.engine);
  if (absl::Status s = TenantsFromFlags(options); !s.ok()) return s;
  if (absl::Status s = SourcePreferenceFromFlags(options.engine); !s.ok()) {
    return s;
  }
  if (absl::Status s = JobsFromFlags(options); !s.ok()) return s;
  options.jobs.peak_hours = options.engine.peak_hours;
  return options;
}

}  // namespace server
