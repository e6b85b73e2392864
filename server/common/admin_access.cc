#include "server/common/admin_access.h"

#include "absl/strings/str_cat.h"
#include "domain/priority.h"
#include "server/common/trusted_proxies.h"

namespace server {

bool AdminPolicy::Allows(absl::string_view peer,
                         const std::string& tenant) const {
  if (tenants.contains(tenant)) return true;
  static const TrustedProxies* const loopback =
      new TrustedProxies(*TrustedProxies::Parse(TrustedProxies::kLoopback));
  return tenant == domain::kDefaultTenant && loopback->Trusts(peer);
}

ErrorDetails AdminRefusal(absl::string_view what) {
  return DetailsOf(
      grpc::StatusCode::PERMISSION_DENIED, domain::ErrorReason::kAdminOnly,
      absl::StrCat(what,
                   " is for operators: it answers callers on this machine "
                   "(loopback, with no tenant of their own) and the tenants "
                   "of --admin_tenants"));
}

}  // namespace server
