// vin-server's flags are defined by concern, one file each
// (server/flags_<group>.cc); each file fills its part of ServerOptions with
// one of these functions, which OptionsFromFlags (flags.cc) calls in turn.
// INVALID_ARGUMENT names a bad flag.
#ifndef VIN_SERVER_FLAG_GROUPS_H_
#define VIN_SERVER_FLAG_GROUPS_H_

#include "absl/status/status.h"
#include "server/server.h"

namespace server {

// flags_listen.cc: the listeners' addresses and TLS files (checked by
// VinServer::Start: listener_checks.h).
void ListenersFromFlags(ServerOptions& options);
// flags_cache.cc: the memory and disk caches and the snapshot.
absl::Status CacheFromFlags(ServerOptions& options);
// flags_cache.cc: --source_preference.
absl::Status SourcePreferenceFromFlags(engine::EngineOptions& e);
// flags_http.cc: the HTTP gateway's limits.
absl::Status HttpFromFlags(http::GatewayOptions& http);
// flags_limits.cc: connections, memory, pending decodes, the batch window.
void LimitsFromFlags(ServerOptions& options);
// flags_fleet.cc: Redis and the fleet.
absl::Status FleetFromFlags(FleetOptions& fleet);
// flags_upstream.cc: vPIC, the rate, retries, the breaker.
void UpstreamFromFlags(engine::EngineOptions& e);
// flags_tenants.cc: bulk's shares, tenants' weights, the peak hours, the
// tenant header and trusted proxies, interactive tenants.
absl::Status TenantsFromFlags(ServerOptions& options);
// flags_jobs.cc: bulk jobs (store, window, limits, notifications).
absl::Status JobsFromFlags(ServerOptions& options);

}  // namespace server

#endif  // VIN_SERVER_FLAG_GROUPS_H_
