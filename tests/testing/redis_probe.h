// A test's own blocking look into Redis (hiredis's synchronous API, one
// connection per call): what the fleet wrote there, without an event loop.
#ifndef VIN_TESTS_TESTING_REDIS_PROBE_H_
#define VIN_TESTS_TESTING_REDIS_PROBE_H_

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "fleet/redis_client.h"

namespace testing_util {

// Runs one command against the Redis on loopback `port`.
inline absl::StatusOr<fleet::RedisValue> RedisCall(
    int port, const std::vector<std::string>& argv) {
  const timeval five_seconds{5, 0};
  redisContext* c = redisConnectWithTimeout("127.0.0.1", port, five_seconds);
  if (c == nullptr || c->err != 0) {
    const std::string why = c == nullptr ? "out of memory" : c->errstr;
    if (c != nullptr) redisFree(c);
    return absl::UnavailableError(absl::StrCat("redis probe: ", why));
  }
  redisSetTimeout(c, five_seconds);
  std::vector<const char*> args;
  std::vector<size_t> lens;
  for (const std::string& a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* r = static_cast<redisReply*>(redisCommandArgv(
      c, static_cast<int>(args.size()), args.data(), lens.data()));
  absl::StatusOr<fleet::RedisValue> out =
      r == nullptr ? absl::UnavailableError(absl::StrCat("redis probe: ", c->errstr))
      : r->type == REDIS_REPLY_ERROR
          ? absl::StatusOr<fleet::RedisValue>(absl::InternalError(
                absl::StrCat("redis probe: ", std::string(r->str, r->len))))
          : absl::StatusOr<fleet::RedisValue>(fleet::ValueOf(r));
  if (r != nullptr) freeReplyObject(r);
  redisFree(c);
  return out;
}

}  // namespace testing_util

#endif  // VIN_TESTS_TESTING_REDIS_PROBE_H_
