#include "server/http/request_checks.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace server {
namespace http {
namespace {

bool IsLoopbackName(const std::string& name) {
  if (name == "localhost" || absl::EndsWith(name, ".localhost")) return true;
  in_addr v4;
  if (inet_pton(AF_INET, name.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6;
  if (inet_pton(AF_INET6, name.c_str(), &v6) == 1) {
    static const in6_addr kLoopback = IN6ADDR_LOOPBACK_INIT;
    return memcmp(&v6, &kLoopback, sizeof(v6)) == 0;
  }
  return false;
}

}  // namespace

std::string FramingProblem(
    unsigned version, const std::vector<absl::string_view>& transfer_encodings,
    size_t content_lengths) {
  if (content_lengths > 1) {
    return "the request has more than one Content-Length";
  }
  if (transfer_encodings.empty()) return "";
  std::string te = absl::StrJoin(transfer_encodings, ",");
  if (!absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(te), "chunked")) {
    return absl::StrCat("Transfer-Encoding \"", te.substr(0, 64),
                        "\" is not served: only \"chunked\" is");
  }
  if (version != 11) {
    return "Transfer-Encoding is served on HTTP/1.1 only";
  }
  if (content_lengths > 0) {
    return "the request has both Transfer-Encoding and Content-Length";
  }
  return "";
}

std::string HostName(absl::string_view host) {
  host = absl::StripAsciiWhitespace(host);
  if (!host.empty() && host.front() == '[') {
    const size_t close = host.find(']');
    return absl::AsciiStrToLower(host.substr(1, close == absl::string_view::npos
                                                    ? absl::string_view::npos
                                                    : close - 1));
  }
  const size_t colon = host.find(':');
  return absl::AsciiStrToLower(host.substr(0, colon));
}

absl::StatusOr<AllowedHosts> AllowedHosts::Parse(absl::string_view spec,
                                                 bool listens_on_loopback) {
  AllowedHosts out;
  if (absl::StripAsciiWhitespace(spec).empty()) {
    out.loopback_ = listens_on_loopback;
    out.any_ = !listens_on_loopback;
    out.description_ = listens_on_loopback
                           ? "loopback names and addresses (the gateway "
                             "listens on loopback; see --http_allowed_hosts)"
                           : "any host";
    return out;
  }
  std::vector<std::string> shown;
  for (absl::string_view entry :
       absl::StrSplit(spec, ',', absl::SkipWhitespace())) {
    std::string name = absl::AsciiStrToLower(absl::StripAsciiWhitespace(entry));
    shown.push_back(name);
    if (name == "*") {
      out.any_ = true;
    } else if (absl::StartsWith(name, "*.") && name.size() > 2) {
      out.suffixes_.push_back(name.substr(1));
    } else if (!name.empty() &&
               name.find_first_of("/*[] ") == std::string::npos &&
               std::count(name.begin(), name.end(), ':') != 1) {
      out.names_.push_back(std::move(name));  // (colons: an IPv6 address)
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "--http_allowed_hosts: \"", entry,
          "\" is not a host name (e.g. vin.example.com, *.example.com, *), "
          "without a port"));
    }
  }
  out.description_ = absl::StrJoin(shown, ", ");
  return out;
}

bool AllowedHosts::Allows(absl::string_view host) const {
  if (any_) return true;
  const std::string name = HostName(host);
  if (absl::StripAsciiWhitespace(host).empty()) return true;  // HTTP/1.0
  if (loopback_ && IsLoopbackName(name)) return true;
  for (const std::string& n : names_) {
    if (n == name) return true;
  }
  for (const std::string& s : suffixes_) {
    if (absl::EndsWith(name, s)) return true;
  }
  return false;
}

bool SameOrigin(absl::string_view origin, absl::string_view scheme,
                absl::string_view host) {
  host = absl::StripAsciiWhitespace(host);
  if (host.empty()) return false;
  return absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(origin),
                                absl::StrCat(scheme, "://", host));
}

}  // namespace http
}  // namespace server
