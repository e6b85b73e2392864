// Who a caller is, whose work may be interactive, and the shares of the
// upstream rate: tenants' weights, bulk's shares, the peak hours.
// --help lists these flags under "tenants (identity, priority, fair share, peak
// hours)" (server/flags.cc).

#include <algorithm>
#include <string>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "server/flag_groups.h"
#include "server/common/tenant.h"
#include "server/common/trusted_proxies.h"
#include "upstream/peak_hours.h"

ABSL_FLAG(double, bulk_min_share, 0.1,
          "bulk's guaranteed share of the VINs sent to vPIC whenever bulk "
          "work waits, however much interactive work there is (0 to 1)");
ABSL_FLAG(std::string, tenant_weights, "",
          "tenants' weights in their turns at the upstream queue, "
          "name:weight,... (others weigh 1)");
ABSL_FLAG(std::string, peak_hours, "Mon-Fri 06:00-18:00 America/New_York",
          "NHTSA's peak hours, when bulk work uses at most "
          "--bulk_peak_share of the rate (\"none\": no peak hours)");
ABSL_FLAG(double, bulk_peak_share, 0.5,
          "the share of the rate bulk work may use during --peak_hours "
          "(above 0, at most 1)");
ABSL_FLAG(std::string, tenant_header, "x-vin-tenant",
          "the metadata (and HTTP) header naming a caller's tenant when its "
          "client certificate does not");
ABSL_FLAG(std::string, trusted_proxies,
          std::string(server::TrustedProxies::kLoopback),
          "peers (IP addresses or CIDR blocks, comma-separated) whose tenant "
          "header is believed: the last value in the request, as the proxy "
          "nearest this server set it; from other peers it is ignored (the "
          "tenant is \"default\" without a client certificate); \"\": "
          "nobody");
ABSL_FLAG(std::string, interactive_tenants, "*",
          "tenants whose DecodeBatch streams and lists of VINs may ask for "
          "PRIORITY_INTERACTIVE (comma-separated; quote a name with commas: "
          "\"CN=a,O=b\"); others' are bulk whatever they ask; \"*\": "
          "every tenant's; single decodes may always be interactive");
ABSL_FLAG(std::string, admin_tenants, "",
          "tenants (as --interactive_tenants names them) that may call the "
          "operators' methods (GetParity, GET /v1/parity) from anywhere; "
          "callers on loopback with no tenant of their own always may");
ABSL_FLAG(int, max_tenants, 100,
          "tenants named in metrics; the rest share the label \"other\"");

namespace server {
namespace {

// Bulk's shares of the rate, the tenants' weights and the peak hours.
absl::Status SharesFromFlags(engine::EngineOptions& e) {
  e.share.bulk_min_share = absl::GetFlag(FLAGS_bulk_min_share);
  if (!(e.share.bulk_min_share >= 0 && e.share.bulk_min_share <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--bulk_min_share must be between 0 and 1, got ",
                     e.share.bulk_min_share));
  }
  e.bulk_peak_share = absl::GetFlag(FLAGS_bulk_peak_share);
  if (!(e.bulk_peak_share > 0 && e.bulk_peak_share <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--bulk_peak_share must be above 0 and at most 1, got ",
                     e.bulk_peak_share));
  }
  auto weights =
      server::ParseTenantWeights(absl::GetFlag(FLAGS_tenant_weights));
  if (!weights.ok()) return weights.status();
  e.share.tenant_weights = *std::move(weights);
  auto peak = upstream::PeakHours::Parse(absl::GetFlag(FLAGS_peak_hours));
  if (!peak.ok()) return peak.status();
  e.peak_hours = *std::move(peak);
  return absl::OkStatus();
}

}  // namespace

absl::Status TenantsFromFlags(ServerOptions& options) {
  if (absl::Status s = SharesFromFlags(options.engine); !s.ok()) return s;
  options.tenants.header =
      absl::AsciiStrToLower(absl::GetFlag(FLAGS_tenant_header));
  if (options.tenants.header.empty()) {
    return absl::InvalidArgumentError("--tenant_header cannot be empty");
  }
  auto proxies = TrustedProxies::Parse(absl::GetFlag(FLAGS_trusted_proxies));
  if (!proxies.ok()) return proxies.status();
  options.tenants.trusted_proxies = *std::move(proxies);
  {
    auto admins =
        ParseTenantList(absl::GetFlag(FLAGS_admin_tenants), "--admin_tenants");
    if (!admins.ok()) return admins.status();
    options.admins.tenants.clear();
    options.admins.tenants.insert(admins->begin(), admins->end());
  }
  const std::string interactive = absl::GetFlag(FLAGS_interactive_tenants);
  if (interactive != "*") {
    auto names = ParseTenantList(interactive, "--interactive_tenants");
    if (!names.ok()) return names.status();
    options.tenants.interactive_tenants.emplace(names->begin(), names->end());
  }
  options.http.tenants = options.tenants;
  options.max_tenants = std::max(1, absl::GetFlag(FLAGS_max_tenants));
  return absl::OkStatus();
}

}  // namespace server
