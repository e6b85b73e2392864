// Who is asking (DESIGN rule 17): a call's tenant and its priority.
//
// The tenant is the subject of the client's certificate when mutual TLS
// is on, else the value of a metadata header (--tenant_header, default
// x-vin-tenant; the HTTP gateway reads the same header), else "default".
// Header values are trimmed and cut to domain::kMaxTenantBytes.
#ifndef VIN_SERVER_TENANT_H_
#define VIN_SERVER_TENANT_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "domain/priority.h"
#include "grpcpp/server_context.h"
#include "vin/v1/vin.pb.h"

namespace server {

inline constexpr absl::string_view kDefaultTenantHeader = "x-vin-tenant";

// The tenant of a header's value ("default" for none or blank).
std::string TenantFromHeader(absl::string_view value);

// The tenant of a gRPC call. `header` is lower case.
std::string TenantOf(const grpc::ServerContextBase& context,
                     const std::string& header);

// --tenant_weights: "name:weight,..." (a weight from kMinTenantWeight to
// kMaxTenantWeight); the error names the bad entry.
inline constexpr double kMinTenantWeight = 0.01;
inline constexpr double kMaxTenantWeight = 10000;
absl::StatusOr<absl::flat_hash_map<std::string, double>> ParseTenantWeights(
    absl::string_view spec);

// A request's priority; `unspecified` for PRIORITY_UNSPECIFIED (and values
// this server does not know).
domain::Priority PriorityOf(vin::v1::Priority p, domain::Priority unspecified);

}  // namespace server

#endif  // VIN_SERVER_TENANT_H_
