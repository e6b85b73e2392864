#include "server/common/tenant.h"

#include <grpc/grpc_security_constants.h>
#include <grpcpp/security/auth_context.h>
#include <openssl/sha.h>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "util/utf8.h"

namespace server {
namespace {

// One entry of a tenant list: a name (quoted or not), and what follows
// it in the entry (":2" for a weight), trimmed.
struct Entry {
  std::string name;
  std::string rest;
};

// Splits `spec` at commas outside double quotes; a quoted name has its
// quotes removed and "" inside it read as one quote.
absl::StatusOr<std::vector<Entry>> SplitEntries(absl::string_view spec,
                                                absl::string_view flag,
                                                bool unquoted_rest_at_colon) {
  std::vector<Entry> out;
  size_t i = 0;
  auto skip_space = [&] {
    while (i < spec.size() &&
           absl::ascii_isspace(static_cast<unsigned char>(spec[i])))
      ++i;
  };
  while (true) {
    skip_space();
    if (i >= spec.size()) break;
    Entry e;
    const size_t start = i;
    if (spec[i] == '"') {
      ++i;
      bool closed = false;
      while (i < spec.size()) {
        if (spec[i] == '"') {
          if (i + 1 < spec.size() && spec[i + 1] == '"') {
            e.name.push_back('"');
            i += 2;
            continue;
          }
          ++i;
          closed = true;
          break;
        }
        e.name.push_back(spec[i++]);
      }
      if (!closed) {
        return absl::InvalidArgumentError(
            absl::StrCat(flag, ": the quoted name at \"",
                         spec.substr(start, 40), "\" has no closing quote"));
      }
      const size_t comma = spec.find(',', i);
      e.rest =
          std::string(absl::StripAsciiWhitespace(spec.substr(i, comma - i)));
      i = comma == absl::string_view::npos ? spec.size() : comma + 1;
    } else {
      const size_t comma = spec.find(',', i);
      absl::string_view entry =
          absl::StripAsciiWhitespace(spec.substr(i, comma - i));
      i = comma == absl::string_view::npos ? spec.size() : comma + 1;
      const size_t colon =
          unquoted_rest_at_colon ? entry.rfind(':') : absl::string_view::npos;
      e.name = std::string(absl::StripAsciiWhitespace(entry.substr(0, colon)));
      if (colon != absl::string_view::npos)
        e.rest = std::string(entry.substr(colon));
    }
    if (e.name.empty() && e.rest.empty()) continue;  // "a,,b"
    out.push_back(std::move(e));
  }
  return out;
}

// Whether `name` ends as a digested name does: "~" and the hex digits.
bool LooksDigested(absl::string_view name) {
  const size_t hex = 2 * kTenantDigestBytes;
  if (name.size() < hex + 1 || name[name.size() - hex - 1] != '~') return false;
  for (char c : name.substr(name.size() - hex)) {
    if (!absl::ascii_isdigit(c) && !(c >= 'a' && c <= 'f')) return false;
  }
  return true;
}

}  // namespace

std::string TenantFromHeader(absl::string_view value) {
  const std::string safe =
      util::SafeText(absl::StripAsciiWhitespace(value), value.size() * 3);
  const absl::string_view trimmed = absl::StripAsciiWhitespace(safe);
  if (trimmed.empty()) return std::string(domain::kDefaultTenant);
  if (trimmed.size() <= domain::kMaxTenantBytes && !LooksDigested(trimmed)) {
    return std::string(trimmed);
  }
  // Longer: its start, and a digest of the whole, so that two long names
  // (certificate subjects) that start alike stay two tenants. (A short
  // name that looks like one is digested too: it cannot pass for the
  // digested form of a long name configured.)
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(trimmed.data()), trimmed.size(),
         digest);
  const std::string tag = absl::StrCat(
      "~", absl::BytesToHexString(absl::string_view(
               reinterpret_cast<const char*>(digest), kTenantDigestBytes)));
  return absl::StrCat(
      util::SafeText(trimmed, domain::kMaxTenantBytes - tag.size()), tag);
}

std::string TenantPolicy::Resolve(
    absl::string_view certificate_subject, absl::string_view peer,
    const std::vector<absl::string_view>& header_values) const {
  if (!certificate_subject.empty())
    return TenantFromHeader(certificate_subject);
  if (!header_values.empty() && trusted_proxies.Trusts(peer)) {
    return TenantFromHeader(header_values.back());
  }
  return std::string(domain::kDefaultTenant);
}

std::string TenantPolicy::TenantOf(
    const grpc::ServerContextBase& context) const {
  absl::string_view subject;
  std::string subject_storage;
  if (auto auth = context.auth_context(); auth != nullptr) {
    const std::vector<grpc::string_ref> s =
        auth->FindPropertyValues(GRPC_X509_SUBJECT_PROPERTY_NAME);
    if (!s.empty() && s.front().size() > 0) {
      subject_storage.assign(s.front().data(), s.front().size());
      subject = subject_storage;
    }
  }
  std::vector<absl::string_view> values;
  const auto range = context.client_metadata().equal_range(header);
  for (auto it = range.first; it != range.second; ++it) {
    values.emplace_back(it->second.data(), it->second.size());
  }
  return Resolve(subject, TrustedProxies::AddressOfGrpcPeer(context.peer()),
                 values);
}

domain::Priority TenantPolicy::ManyPriority(vin::v1::Priority asked,
                                            const std::string& tenant) const {
  return MayAskInteractive(tenant) ? PriorityOf(asked, domain::Priority::kBulk)
                                   : domain::Priority::kBulk;
}

absl::StatusOr<std::vector<std::string>> ParseTenantList(
    absl::string_view spec, absl::string_view flag) {
  auto entries = SplitEntries(spec, flag, /*unquoted_rest_at_colon=*/false);
  if (!entries.ok()) return entries.status();
  std::vector<std::string> out;
  for (Entry& e : *entries) {
    if (!e.rest.empty() || e.name.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, ": \"", e.name, e.rest,
          "\" is not a tenant name (quote a name with commas: \"CN=a,O=b\")"));
    }
    out.push_back(TenantFromHeader(e.name));  // as a request's would be
  }
  return out;
}

absl::StatusOr<absl::flat_hash_map<std::string, double>> ParseTenantWeights(
    absl::string_view spec) {
  auto entries =
      SplitEntries(spec, "--tenant_weights", /*unquoted_rest_at_colon=*/true);
  if (!entries.ok()) return entries.status();
  absl::flat_hash_map<std::string, double> out;
  for (Entry& e : *entries) {
    double w = 0;
    if (e.name.empty() || e.rest.size() < 2 || e.rest[0] != ':' ||
        !absl::SimpleAtod(absl::string_view(e.rest).substr(1), &w) ||
        !(w >= kMinTenantWeight && w <= kMaxTenantWeight)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--tenant_weights: \"", e.name, e.rest,
          "\" is not name:weight with a weight from ", kMinTenantWeight, " to ",
          kMaxTenantWeight,
          " (e.g. acme:2,beta:1; quote a name with commas: \"CN=a,O=b\":2)"));
    }
    out[TenantFromHeader(e.name)] = w;  // as a request's would be
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
