// A small Redis client over hiredis for fleet mode: commands are queued from
// any thread and sent, pipelined, by a thread of the client's own over one
// connection; a second connection on another thread holds a subscription.
// No caller ever waits on Redis: a command's callback runs on the client's
// thread, with an error when Redis is down, when the command waited longer
// than the timeout, or when it failed. Reconnects on its own, and says when
// Redis goes down or comes back (once per change).
//
// Thread-safe.
#ifndef VIN_FLEET_REDIS_CLIENT_H_
#define VIN_FLEET_REDIS_CLIENT_H_

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

struct redisContext;

namespace fleet {

// One reply, or one element of an array reply.
struct RedisValue {
  enum class Type { kNil, kString, kInteger, kArray, kStatus };
  Type type = Type::kNil;
  std::string str;       // kString, kStatus
  long long integer = 0;  // kInteger
  std::vector<RedisValue> elements;  // kArray
};

struct RedisAddress {
  std::string host = "127.0.0.1";
  int port = 6379;
  int db = 0;
};

// "redis://host:port[/db]".
absl::StatusOr<RedisAddress> ParseRedisUrl(const std::string& url);

class RedisClient {
 public:
  using Reply = absl::StatusOr<RedisValue>;
  using Callback = std::function<void(Reply)>;
  // (channel, message) of a subscription; runs on the subscriber's thread.
  using MessageHandler = std::function<void(std::string, std::string)>;
  // Redis went down (false) or came back (true).
  using StateHandler = std::function<void(bool up)>;

  RedisClient(RedisAddress address, absl::Duration timeout,
              StateHandler on_state);
  ~RedisClient();

  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  // Queues a command; `done` gets its reply (a Redis error reply is an
  // error status too).
  void Command(std::vector<std::string> argv, Callback done);
  // Subscribes to `channel` (once, before or after the connection is up; it
  // is renewed on every reconnect).
  void Subscribe(std::string channel, MessageHandler on_message);

  bool up() const { return up_.load(); }
  uint64_t errors() const { return errors_.load(); }
  // Commands sent (each one round trip, though pipelined with others).
  uint64_t commands() const { return commands_sent_.load(); }

 private:
  struct Pending {
    std::vector<std::string> argv;
    Callback done;
    absl::Time queued;
  };
  void RunCommands();
  void RunSubscriber();
  redisContext* Connect() const;
  void NoteUp(bool up);

  const RedisAddress address_;
  const absl::Duration timeout_;
  const StateHandler on_state_;
  std::atomic<bool> up_{false};
  std::atomic<uint64_t> errors_{0};
  std::atomic<uint64_t> commands_sent_{0};

  absl::Mutex mu_;
  std::deque<Pending> queue_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool state_known_ ABSL_GUARDED_BY(mu_) = false;
  bool reported_up_ ABSL_GUARDED_BY(mu_) = false;
  std::string channel_ ABSL_GUARDED_BY(mu_);
  MessageHandler on_message_ ABSL_GUARDED_BY(mu_);

  std::thread commands_;
  std::thread subscriber_;
};

}  // namespace fleet

#endif  // VIN_FLEET_REDIS_CLIENT_H_
