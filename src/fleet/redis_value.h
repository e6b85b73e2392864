// What Redis answers, as the fleet reads it: a RESP reply (or an element
// of an array reply), made from hiredis's parser's redisReply.
#ifndef VIN_FLEET_REDIS_VALUE_H_
#define VIN_FLEET_REDIS_VALUE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

struct redisReply;

namespace fleet {

struct RedisValue {
  enum class Type { kNil, kString, kInteger, kArray, kStatus };
  Type type = Type::kNil;
  std::string str;                   // kString, kStatus
  long long integer = 0;             // kInteger
  std::vector<RedisValue> elements;  // kArray
};

// hiredis's reply as a RedisValue (an error reply is a kStatus here; see
// ReplyOf).
RedisValue ValueOf(const redisReply* reply);

// The reply, or for an error reply INTERNAL "redis: <its text>" (the text
// made printable and bounded: it comes from the network).
absl::StatusOr<RedisValue> ReplyOf(const redisReply* reply);

// `text` as it may go into a message or a log line: printable ASCII (any
// other byte becomes '?'), at most `max` bytes ("..." marks a cut).
std::string PrintableText(const std::string& text, size_t max = 200);

}  // namespace fleet

#endif  // VIN_FLEET_REDIS_VALUE_H_
