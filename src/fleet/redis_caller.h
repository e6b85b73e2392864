// Redis for callers that wait (the job store, DESIGN rule 20): a
// RedisClient on an event loop and thread of its own, and Call(), which
// sends commands and blocks until their replies. The client is the fleet's
// (credentials, TLS, bounded replies, reconnecting with backoff); a reply
// that takes longer than the timeout fails UNAVAILABLE and the connection is
// made again.
//
// Thread-safe: Call() from any thread but the caller's own loop.
#ifndef VIN_FLEET_REDIS_CALLER_H_
#define VIN_FLEET_REDIS_CALLER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fleet/redis_client.h"
#include "loop/event_loop.h"

namespace fleet {

class RedisCaller {
 public:
  using Reply = absl::StatusOr<RedisValue>;

  // Connects to `address` (TLS from `tls` for rediss://) on a thread of its
  // own. `on_state` hears Redis go down and come back (on that thread).
  static absl::StatusOr<std::unique_ptr<RedisCaller>> Start(
      RedisAddress address, std::shared_ptr<const RedisTls> tls,
      absl::Duration timeout, RedisClient::StateHandler on_state = nullptr);
  ~RedisCaller();

  // One command's reply (a Redis error reply is INTERNAL; Redis down,
  // UNAVAILABLE).
  Reply Call(std::vector<std::string> argv);
  // Several, pipelined: one reply each, in order.
  std::vector<Reply> CallAll(std::vector<std::vector<std::string>> commands);

  bool up() const { return client_.up(); }

 private:
  RedisCaller(std::unique_ptr<loop::EventLoop> loop, RedisAddress address,
              std::shared_ptr<const RedisTls> tls, absl::Duration timeout,
              RedisClient::StateHandler on_state);

  const std::unique_ptr<loop::EventLoop> loop_;
  RedisClient client_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace fleet

#endif  // VIN_FLEET_REDIS_CALLER_H_
