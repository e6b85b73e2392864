// --redis_url: where the fleet's Redis is and how to reach it (DESIGN
// "Beyond one machine"): redis://[[user]:password@]host[:port][/db], or
// rediss://... for TLS. A user and password are percent-decoded ("%40" is
// "@"); an IPv6 address goes in brackets. The password never appears in a
// message: errors and logs show the URL through RedactRedisUrl.
#ifndef VIN_FLEET_REDIS_URL_H_
#define VIN_FLEET_REDIS_URL_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fleet {

struct RedisAddress {
  std::string host = "127.0.0.1";
  int port = 6379;
  int db = 0;
  bool tls = false;  // rediss://
  // AUTH: `AUTH user password` (an ACL user of Redis 6+) when `user` is
  // set, else `AUTH password`; no AUTH without a password.
  std::string user;
  std::string password;

  // "host:port" ("[::1]:6379"), for messages: no credentials.
  std::string Endpoint() const;
};

// The address in `url`. INVALID_ARGUMENT names what is wrong, showing the
// URL redacted: another scheme, no host, a bad port or database, a bad
// percent-escape, an empty password, a query or fragment. A user without
// a password parses (its password may come from --redis_password_file).
absl::StatusOr<RedisAddress> ParseRedisUrl(const std::string& url);

// `url` with its password, if it has one, replaced by "***"; anything else
// as it is. Also for URLs that do not parse, so that an error can show
// what was given.
std::string RedactRedisUrl(absl::string_view url);

}  // namespace fleet

#endif  // VIN_FLEET_REDIS_URL_H_
