// What the fleet reads from Redis: a reply as a RedisValue
// (fleet/redis_value.h).
#include <hiredis/hiredis.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "fleet/redis_value.h"

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

absl::StatusOr<RedisValue> ReplyOf(const redisReply* r) {
  if (r->type == REDIS_REPLY_ERROR) {
    return absl::InternalError(
        absl::StrCat("redis: ", PrintableText(std::string(r->str, r->len))));
  }
  return ValueOf(r);
}

std::string PrintableText(const std::string& text, size_t max) {
  std::string out;
  out.reserve(std::min(text.size(), max) + 3);
  for (char c : text) {
    if (out.size() >= max) {
      out += "...";
      break;
    }
    const auto u = static_cast<unsigned char>(c);
    out.push_back(u >= 0x20 && u < 0x7f ? c : '?');
  }
  return out;
}

}  // namespace fleet
