#include "fleet/redis_client.h"

#include <hiredis/hiredis.h>
#include <poll.h>
#include <sys/time.h>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace fleet {
namespace {


RedisValue Convert(const redisReply* r) {
  RedisValue v;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      v.type = RedisValue::Type::kString;
      v.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      v.type = RedisValue::Type::kStatus;
      v.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      v.type = RedisValue::Type::kInteger;
      v.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      v.type = RedisValue::Type::kArray;
      for (size_t i = 0; i < r->elements; ++i) {
        v.elements.push_back(Convert(r->element[i]));
      }
      break;
    default:
      break;  // nil
  }
  return v;
}

// A reply as our value, or the error it is.
RedisClient::Reply FromReply(redisContext* c, redisReply* r) {
  if (r == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("redis: ", c->errstr[0] ? c->errstr : "no reply"));
  }
  if (r->type == REDIS_REPLY_ERROR) {
    return absl::InternalError(absl::StrCat("redis: ", std::string(r->str, r->len)));
  }
  return Convert(r);
}

}  // namespace

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

RedisClient::RedisClient(RedisAddress address, absl::Duration timeout,
                         StateHandler on_state)
    : address_(std::move(address)),
      timeout_(timeout),
      on_state_(std::move(on_state)),
      commands_([this] { RunCommands(); }),
      subscriber_([this] { RunSubscriber(); }) {}

RedisClient::~RedisClient() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  commands_.join();
  subscriber_.join();
}

void RedisClient::Command(std::vector<std::string> argv, Callback done) {
  absl::MutexLock lock(&mu_);
  queue_.push_back({std::move(argv), std::move(done), absl::Now()});
}

void RedisClient::Subscribe(std::string channel, MessageHandler on_message) {
  absl::MutexLock lock(&mu_);
  channel_ = std::move(channel);
  on_message_ = std::move(on_message);
}

redisContext* RedisClient::Connect() const {
  redisContext* c = redisConnectWithTimeout(address_.host.c_str(),
                                            address_.port, absl::ToTimeval(timeout_));
  if (c == nullptr) return nullptr;
  if (c->err != 0) {
    redisFree(c);
    return nullptr;
  }
  redisSetTimeout(c, absl::ToTimeval(timeout_));
  redisEnableKeepAlive(c);
  if (address_.db != 0) {
    auto* r = static_cast<redisReply*>(
        redisCommand(c, "SELECT %d", address_.db));
    const bool ok = r != nullptr && r->type != REDIS_REPLY_ERROR;
    if (r != nullptr) freeReplyObject(r);
    if (!ok) {
      redisFree(c);
      return nullptr;
    }
  }
  return c;
}

void RedisClient::NoteUp(bool up) {
  up_.store(up);
  bool changed = false;
  {
    absl::MutexLock lock(&mu_);
    changed = !state_known_ || reported_up_ != up;
    state_known_ = true;
    reported_up_ = up;
  }
  if (changed && on_state_) on_state_(up);
}

void RedisClient::RunCommands() {
  redisContext* c = nullptr;
  absl::Time next_connect = absl::InfinitePast();
  absl::Duration backoff = absl::Milliseconds(100);
  for (;;) {
    std::deque<Pending> batch;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stop_ || !queue_.empty();
      };
      mu_.AwaitWithTimeout(absl::Condition(&ready), absl::Milliseconds(200));
      if (stop_) break;
      batch.swap(queue_);
    }
    const absl::Time now = absl::Now();
    if (c == nullptr && now >= next_connect) {
      c = Connect();
      if (c == nullptr) {
        next_connect = now + backoff;
        backoff = std::min(backoff * 2, absl::Seconds(1));
      } else {
        backoff = absl::Milliseconds(100);
      }
      NoteUp(c != nullptr);
    }
    // Commands that waited too long, or that find Redis down, fail at once:
    // their callers go on without Redis.
    std::vector<Pending> sent;
    for (Pending& p : batch) {
      if (c == nullptr || now - p.queued > timeout_) {
        errors_.fetch_add(1);
        p.done(absl::UnavailableError(c == nullptr ? "redis is unreachable"
                                                   : "redis command timed out"));
        continue;
      }
      std::vector<const char*> args;
      std::vector<size_t> lens;
      for (const std::string& a : p.argv) {
        args.push_back(a.data());
        lens.push_back(a.size());
      }
      redisAppendCommandArgv(c, static_cast<int>(args.size()), args.data(),
                             lens.data());
      sent.push_back(std::move(p));
    }
    commands_sent_.fetch_add(sent.size());
    bool broken = false;
    for (Pending& p : sent) {
      void* raw = nullptr;
      if (!broken && redisGetReply(c, &raw) != REDIS_OK) broken = true;
      auto* r = static_cast<redisReply*>(raw);
      Reply reply = broken ? Reply(absl::UnavailableError(absl::StrCat(
                                 "redis: ", c->errstr[0] ? c->errstr : "connection lost")))
                           : FromReply(c, r);
      if (r != nullptr) freeReplyObject(r);
      if (!reply.ok()) errors_.fetch_add(1);
      p.done(std::move(reply));
    }
    if (broken) {
      redisFree(c);
      c = nullptr;
      next_connect = absl::Now();
      NoteUp(false);
    }
  }
  if (c != nullptr) redisFree(c);
}

void RedisClient::RunSubscriber() {
  redisContext* c = nullptr;
  // The subscription, read again only when (re)connecting, not per message.
  std::string channel;
  MessageHandler on_message;
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (stop_) break;
      if (c == nullptr) {
        channel = channel_;
        on_message = on_message_;
      }
    }
    if (channel.empty()) {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&stop_), absl::Milliseconds(100));
      continue;
    }
    if (c == nullptr) {
      c = Connect();
      if (c == nullptr) {
        absl::MutexLock lock(&mu_);
        mu_.AwaitWithTimeout(absl::Condition(&stop_), absl::Milliseconds(200));
        continue;
      }
      auto* r = static_cast<redisReply*>(
          redisCommand(c, "SUBSCRIBE %b", channel.data(), channel.size()));
      if (r == nullptr) {
        redisFree(c);
        c = nullptr;
        continue;
      }
      freeReplyObject(r);
    }
    // Replies already read are taken first; then the socket is polled for
    // at most 200 ms, so that a stop is noticed, and read only when ready.
    void* raw = nullptr;
    if (redisGetReplyFromReader(c, &raw) != REDIS_OK) {
      redisFree(c);
      c = nullptr;
      errors_.fetch_add(1);
      continue;
    }
    if (raw == nullptr) {
      pollfd p{c->fd, POLLIN, 0};
      const int ready = poll(&p, 1, 200);
      if (ready > 0 && redisBufferRead(c) != REDIS_OK) {
        redisFree(c);  // the connection broke: reconnect and subscribe again
        c = nullptr;
        errors_.fetch_add(1);
      }
      continue;
    }
    auto* r = static_cast<redisReply*>(raw);
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
        r->element[0]->type == REDIS_REPLY_STRING &&
        std::string(r->element[0]->str, r->element[0]->len) == "message") {
      on_message(std::string(r->element[1]->str, r->element[1]->len),
                 std::string(r->element[2]->str, r->element[2]->len));
    }
    freeReplyObject(r);
  }
  if (c != nullptr) redisFree(c);
}

}  // namespace fleet
