// What RedisClient reads and is given: a reply as a RedisValue, and the
// --redis_url as an address (declared in redis_client.h).
#include <hiredis/hiredis.h>

#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "fleet/redis_client.h"

namespace fleet {

RedisValue ValueOf(const redisReply* r) {
  RedisValue v;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      v.type = RedisValue::Type::kString;
      v.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
      v.type = RedisValue::Type::kStatus;
      v.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      v.type = RedisValue::Type::kInteger;
      v.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      v.type = RedisValue::Type::kArray;
      v.elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i) {
        v.elements.push_back(ValueOf(r->element[i]));
      }
      break;
    default:
      break;  // nil
  }
  return v;
}

absl::StatusOr<RedisAddress> ParseRedisUrl(const std::string& url) {
  absl::string_view rest = url;
  if (!absl::ConsumePrefix(&rest, "redis://")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--redis_url must look like redis://host:port[/db], got \"", url, "\""));
  }
  RedisAddress a;
  std::pair<absl::string_view, absl::string_view> host_db =
      absl::StrSplit(rest, absl::MaxSplits('/', 1));
  std::pair<absl::string_view, absl::string_view> host_port =
      absl::StrSplit(host_db.first, absl::MaxSplits(':', 1));
  a.host = std::string(host_port.first);
  if (a.host.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("no host in --redis_url \"", url, "\""));
  }
  if (!host_port.second.empty() &&
      (!absl::SimpleAtoi(host_port.second, &a.port) || a.port <= 0 ||
       a.port > 65535)) {
    return absl::InvalidArgumentError(absl::StrCat("bad port in --redis_url \"", url, "\""));
  }
  if (!host_db.second.empty() &&
      (!absl::SimpleAtoi(host_db.second, &a.db) || a.db < 0)) {
    return absl::InvalidArgumentError(absl::StrCat("bad database in --redis_url \"", url, "\""));
  }
  return a;
}

}  // namespace fleet
