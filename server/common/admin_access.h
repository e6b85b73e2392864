// Who may call the operators' methods (DESIGN rule 21: GetParity and
// GET /v1/parity list VINs callers asked about): a caller on loopback that
// came with no tenant of its own (no client certificate, no trusted
// proxy's header: a person or a probe on the machine itself), or a tenant
// named in --admin_tenants (a certificate's subject, a proxy's header).
// A proxy on loopback is a trusted proxy (rule 17) and names its callers'
// tenants, so the people behind it are not taken for local ones.
#ifndef VIN_SERVER_COMMON_ADMIN_ACCESS_H_
#define VIN_SERVER_COMMON_ADMIN_ACCESS_H_

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "server/common/status_mapping.h"

namespace server {

struct AdminPolicy {
  absl::flat_hash_set<std::string> tenants;  // --admin_tenants

  // `peer`: the caller's IP address; `tenant`: its tenant as resolved.
  bool Allows(absl::string_view peer, const std::string& tenant) const;
};

// PERMISSION_DENIED (ADMIN_ONLY) naming who may call `what`.
ErrorDetails AdminRefusal(absl::string_view what);

}  // namespace server

#endif  // VIN_SERVER_COMMON_ADMIN_ACCESS_H_
