#include "server/tenant.h"

#include <grpc/grpc_security_constants.h>
#include <grpcpp/security/auth_context.h>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace server {

std::string TenantFromHeader(absl::string_view value) {
  value = absl::StripAsciiWhitespace(value);
  if (value.empty()) return std::string(domain::kDefaultTenant);
  return std::string(value.substr(0, domain::kMaxTenantBytes));
}

std::string TenantOf(const grpc::ServerContextBase& context,
                     const std::string& header) {
  if (auto auth = context.auth_context(); auth != nullptr) {
    const std::vector<grpc::string_ref> subject =
        auth->FindPropertyValues(GRPC_X509_SUBJECT_PROPERTY_NAME);
    if (!subject.empty() && subject.front().size() > 0) {
      return std::string(subject.front().data(),
                         std::min(subject.front().size(), domain::kMaxTenantBytes));
    }
  }
  const auto& metadata = context.client_metadata();
  if (auto it = metadata.find(header); it != metadata.end()) {
    return TenantFromHeader(absl::string_view(it->second.data(), it->second.size()));
  }
  return std::string(domain::kDefaultTenant);
}

absl::StatusOr<absl::flat_hash_map<std::string, double>> ParseTenantWeights(
    absl::string_view spec) {
  absl::flat_hash_map<std::string, double> out;
  for (absl::string_view entry : absl::StrSplit(spec, ',', absl::SkipWhitespace())) {
    entry = absl::StripAsciiWhitespace(entry);
    const size_t colon = entry.rfind(':');
    double w = 0;
    if (colon == absl::string_view::npos || colon == 0 ||
        !absl::SimpleAtod(entry.substr(colon + 1), &w) ||
        !(w >= kMinTenantWeight && w <= kMaxTenantWeight)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--tenant_weights: \"", entry, "\" is not name:weight with a weight from ",
          kMinTenantWeight, " to ", kMaxTenantWeight, " (e.g. acme:2,beta:1)"));
    }
    out[std::string(absl::StripAsciiWhitespace(entry.substr(0, colon)))] = w;
  }
  return out;
}

domain::Priority PriorityOf(vin::v1::Priority p, domain::Priority unspecified) {
  switch (p) {
    case vin::v1::PRIORITY_INTERACTIVE:
      return domain::Priority::kInteractive;
    case vin::v1::PRIORITY_BULK:
      return domain::Priority::kBulk;
    default:
      return unspecified;
  }
}

}  // namespace server
