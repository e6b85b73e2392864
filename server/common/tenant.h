// Who is asking (DESIGN rules 17 and 19): a call's tenant and its priority,
// from trusted sources only.
//
// The tenant is the subject of the client's certificate when mutual TLS
// is on; else, for a peer in --trusted_proxies (default loopback only), the
// last value of the tenant header (--tenant_header, default x-vin-tenant;
// the HTTP gateway reads the same header): the value the proxy nearest us
// set, not one its client sent before it; else "default". A tenant is
// valid UTF-8 without control characters, trimmed, and at most
// domain::kMaxTenantBytes (a longer one is its start and a digest, below).
//
// Priority: a caller may always ask for bulk. Interactive is honoured for
// a single decode, and for a stream or list of VINs only from tenants in
// --interactive_tenants (default: everyone).
//
// TenantPolicy is immutable once made: safe from any thread.
#ifndef VIN_SERVER_COMMON_TENANT_H_
#define VIN_SERVER_COMMON_TENANT_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/optional.h"
#include "domain/priority.h"
#include "grpcpp/server_context.h"
#include "server/common/trusted_proxies.h"
#include "vin/v1/vin.pb.h"

namespace server {

inline constexpr absl::string_view kDefaultTenantHeader = "x-vin-tenant";

// The tenant a header value or certificate subject names: made safe
// (valid UTF-8, no controls), trimmed; "default" for none or blank. One
// longer than domain::kMaxTenantBytes is its start cut on a character
// boundary, "~" and the hex of kTenantDigestBytes of its SHA-256, in
// kMaxTenantBytes: two long names that start alike stay two tenants. The
// names of --tenant_weights and --interactive_tenants go through it too,
// so that a long subject written there matches its requests.
inline constexpr size_t kTenantDigestBytes = 8;
std::string TenantFromHeader(absl::string_view value);

struct TenantPolicy {
  std::string header = std::string(kDefaultTenantHeader);  // lower case
  // Peers whose header is believed (default: loopback).
  TrustedProxies trusted_proxies =
      *TrustedProxies::Parse(TrustedProxies::kLoopback);
  // Tenants whose streams and lists of VINs may be interactive; nullopt:
  // every tenant's.
  absl::optional<absl::flat_hash_set<std::string>> interactive_tenants;

  // The tenant of a request: the certificate's subject when there is one,
  // else the last of `header_values` when `peer` (an IP address) is a
  // trusted proxy, else "default".
  std::string Resolve(
      absl::string_view certificate_subject, absl::string_view peer,
      const std::vector<absl::string_view>& header_values) const;

  // The tenant of a gRPC call.
  std::string TenantOf(const grpc::ServerContextBase& context) const;

  // Whether `tenant`'s streams and lists of VINs may be interactive.
  bool MayAskInteractive(const std::string& tenant) const {
    return !interactive_tenants.has_value() ||
           interactive_tenants->contains(tenant);
  }
  // The priority of a stream's or a list's items asked as `asked` by
  // `tenant` (bulk unless the request says interactive and the tenant
  // may).
  domain::Priority ManyPriority(vin::v1::Priority asked,
                                const std::string& tenant) const;
};

// A list of tenant names (--interactive_tenants): comma-separated; a name
// with a comma, a colon or a quote in it (a certificate subject such as
// CN=acme,O=Acme) is written in double quotes, a quote in it doubled.
// INVALID_ARGUMENT names `flag` and the problem.
absl::StatusOr<std::vector<std::string>> ParseTenantList(
    absl::string_view spec, absl::string_view flag);

// --tenant_weights: "name:weight,..." (a weight from kMinTenantWeight to
// kMaxTenantWeight), names quoted as in ParseTenantList; the error names
// the bad entry.
inline constexpr double kMinTenantWeight = 0.01;
inline constexpr double kMaxTenantWeight = 10000;
absl::StatusOr<absl::flat_hash_map<std::string, double>> ParseTenantWeights(
    absl::string_view spec);

// A request's priority; `unspecified` for PRIORITY_UNSPECIFIED (and values
// this server does not know).
domain::Priority PriorityOf(vin::v1::Priority p, domain::Priority unspecified);

}  // namespace server

#endif  // VIN_SERVER_COMMON_TENANT_H_
