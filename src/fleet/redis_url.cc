#include "fleet/redis_url.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "util/escape.h"

namespace fleet {
namespace {

constexpr absl::string_view kForm =
    "redis://[[user]:password@]host[:port][/db] or rediss://... (TLS)";

// Where the credentials end: the last '@' of the authority (a password
// may hold an unescaped '@'), or npos.
size_t CredentialsEnd(absl::string_view authority) {
  return authority.rfind('@');
}

absl::Status Bad(absl::string_view url, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(what, " in --redis_url \"", RedactRedisUrl(url), "\""));
}

// A host name or IPv4 address: letters, digits, '-', '.', '_'.
bool IsHostName(absl::string_view h) {
  if (h.empty() || h.size() > 253) return false;
  for (char c : h) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' &&
        c != '.' && c != '_') {
      return false;
    }
  }
  return true;
}

// The inside of "[...]": hex digits, ':' and '.' (an IPv4 tail).
bool IsIpv6(absl::string_view h) {
  if (h.empty() || h.size() > 45) return false;
  for (char c : h) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c)) && c != ':' &&
        c != '.') {
      return false;
    }
  }
  return true;
}

absl::Status ParseCredentials(absl::string_view url, absl::string_view info,
                              RedisAddress* a) {
  const size_t colon = info.find(':');
  const absl::string_view user = info.substr(0, colon);
  if (!util::PercentDecode(user, false, &a->user)) {
    return Bad(url, "bad percent-escape in the user");
  }
  if (colon == absl::string_view::npos) return absl::OkStatus();
  if (!util::PercentDecode(info.substr(colon + 1), false, &a->password)) {
    return Bad(url, "bad percent-escape in the password");
  }
  if (a->password.empty()) {
    return Bad(url,
               "empty password (leave out \":@\" for none, or give it in "
               "--redis_password_file)");
  }
  return absl::OkStatus();
}

absl::Status ParseHostPort(absl::string_view url, absl::string_view hp,
                           RedisAddress* a) {
  absl::string_view port;
  if (absl::ConsumePrefix(&hp, "[")) {
    const size_t close = hp.find(']');
    if (close == absl::string_view::npos)
      return Bad(url, "unclosed [ of the host");
    a->host = std::string(hp.substr(0, close));
    if (!IsIpv6(a->host)) return Bad(url, "bad IPv6 address");
    absl::string_view rest = hp.substr(close + 1);
    if (!rest.empty() && !absl::ConsumePrefix(&rest, ":")) {
      return Bad(url, "bad port");
    }
    port = rest;
  } else {
    const size_t colon = hp.find(':');
    a->host = std::string(hp.substr(0, colon));
    if (colon != absl::string_view::npos) port = hp.substr(colon + 1);
    if (a->host.empty()) return Bad(url, "no host");
    if (!IsHostName(a->host)) return Bad(url, "bad host");
  }
  if (a->host.empty()) return Bad(url, "no host");
  if (!port.empty() &&
      (!absl::SimpleAtoi(port, &a->port) || a->port <= 0 || a->port > 65535)) {
    return Bad(url, "bad port");
  }
  return absl::OkStatus();
}

}  // namespace

std::string RedisAddress::Endpoint() const {
  return absl::StrContains(host, ':') ? absl::StrCat("[", host, "]:", port)
                                      : absl::StrCat(host, ":", port);
}

std::string RedactRedisUrl(absl::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == absl::string_view::npos) {
    // No scheme to anchor on: anything before an '@' may be a secret.
    const size_t at = url.rfind('@');
    return at == absl::string_view::npos ? std::string(url)
                                         : absl::StrCat("***", url.substr(at));
  }
  // The credentials end at the last '@' of the whole rest, not of the
  // authority: a password may hold an unescaped '/', '?' or '#' (base64),
  // and a URL that does not parse is shown too. (An '@' in a path or a
  // query masks more than needed: safe.)
  const size_t start = scheme + 3;
  const size_t at = url.rfind('@');
  if (at == absl::string_view::npos || at < start) return std::string(url);
  const size_t colon = url.substr(start, at - start).find(':');
  if (colon == absl::string_view::npos) return std::string(url);  // a user only
  return absl::StrCat(url.substr(0, start + colon + 1), "***", url.substr(at));
}

absl::StatusOr<RedisAddress> ParseRedisUrl(const std::string& url) {
  absl::string_view rest = url;
  RedisAddress a;
  if (absl::ConsumePrefix(&rest, "rediss://")) {
    a.tls = true;
  } else if (!absl::ConsumePrefix(&rest, "redis://")) {
    return absl::InvalidArgumentError(
        absl::StrCat("--redis_url must look like ", kForm, ", got \"",
                     RedactRedisUrl(url), "\""));
  }
  if (rest.find_first_of("?#") != absl::string_view::npos) {
    return Bad(url, "a query or fragment (not supported)");
  }
  const size_t slash = rest.find('/');
  absl::string_view authority = rest.substr(0, slash);
  const absl::string_view path =
      slash == absl::string_view::npos ? "" : rest.substr(slash + 1);
  const size_t at = CredentialsEnd(authority);
  if (at != absl::string_view::npos) {
    if (absl::Status s = ParseCredentials(url, authority.substr(0, at), &a);
        !s.ok()) {
      return s;
    }
    authority = authority.substr(at + 1);
  }
  if (absl::Status s = ParseHostPort(url, authority, &a); !s.ok()) return s;
  if (!path.empty() &&
      (!absl::SimpleAtoi(path, &a.db) || a.db < 0 ||
       !absl::ascii_isdigit(static_cast<unsigned char>(path[0])))) {
    return Bad(url, "bad database (a number after the last /)");
  }
  return a;
}

}  // namespace fleet
