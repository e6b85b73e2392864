// One connection to Redis on the engine's event loop (RedisClient holds
// two: one for commands, one for the events' subscription). It connects
// (TCP, then TLS for rediss://), greets Redis -- AUTH with the URL's
// credentials, then SELECT of the database or PING on the commands'
// connection, SUBSCRIBE on the subscriber's -- and is ready once Redis has
// answered the greeting's last command. Commands go out pipelined as RESP
// (those sent before it is ready queue behind the greeting); each reply,
// parsed by hiredis's redisReader, goes to its command's callback in
// order, and a subscriber's messages go to its handler.
//
// Any failure closes it for good, naming the problem: a greeting Redis
// refuses is PERMISSION_DENIED (AUTH, or a command the ACL user may not
// run) or UNAUTHENTICATED (Redis wants credentials it was not given); a
// TLS handshake that fails is FAILED_PRECONDITION (fleet/redis_stream.h);
// a reply that does not parse, or one larger than kMaxBufferedReply (bytes
// not yet parsed) or than fleet/bounded_reader.h's bounds, is DATA_LOSS; the rest (refused, reset, closed) UNAVAILABLE. RedisClient
// makes a new one.
//
// Loop thread only. Callbacks and handlers run inside the loop's I/O
// handler for the connection, or inside Close(); never inside Send() or
// Flush().
#ifndef VIN_FLEET_REDIS_CONNECTION_H_
#define VIN_FLEET_REDIS_CONNECTION_H_

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fleet/bounded_reader.h"
#include "fleet/redis_stream.h"
#include "fleet/redis_tls.h"
#include "fleet/redis_url.h"
#include "fleet/redis_value.h"
#include "loop/event_loop.h"

struct redisReader;

namespace fleet {

// Bytes of a reply not yet complete that a connection keeps: a Redis (or
// whoever answers in its place) that sends more is dropped.
inline constexpr size_t kMaxBufferedReply = size_t{64} << 20;

class RedisConnection : public std::enable_shared_from_this<RedisConnection> {
 public:
  using Reply = absl::StatusOr<RedisValue>;
  using Callback = std::function<void(Reply)>;
  struct Settings {
    const RedisAddress* address = nullptr;  // not owned; outlives it
    const RedisTls* tls = nullptr;  // for rediss://; not owned; outlives it
    std::string subscribe;          // the subscriber's channel; "" for commands
  };
  struct Handlers {
    std::function<void()> ready;
    // Once, when it fails by itself (not when Close()d), before the
    // commands still waiting are failed with the same status.
    std::function<void(const absl::Status&)> closed;
    // The subscriber's messages: (channel, message).
    std::function<void(std::string, std::string)> message;
  };

  // Starts connecting to `settings.address`. An error (a host name that
  // does not resolve, no socket, no TLS session) means no connection.
  static absl::StatusOr<std::shared_ptr<RedisConnection>> Open(
      loop::EventLoop* loop, Settings settings, Handlers handlers);
  ~RedisConnection();

  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Queues a command; `done` gets its reply (a Redis error reply is an
  // INTERNAL status), or the reason the connection closed.
  void Send(const std::vector<std::string>& argv, Callback done);
  // Writes what is queued now, as far as the socket takes it, instead of
  // on the loop's next turn. An error waits for the loop's next turn.
  void Flush();
  // Closes it: the commands still waiting fail now with `why`.
  void Close(const absl::Status& why);

  bool ready() const { return ready_; }
  bool closed() const { return closed_; }
  absl::Time started() const { return started_; }
  // When the oldest command (or greeting) still waiting for its reply was
  // sent; InfiniteFuture when none waits.
  absl::Time oldest() const;

 private:
  enum class Greeting { kNone, kAuth, kSelect, kPing, kSubscribe };
  struct Pending {
    Callback done;
    absl::Time queued;
    Greeting greeting = Greeting::kNone;
  };

  RedisConnection(loop::EventLoop* loop, Settings settings, Handlers handlers,
                  std::unique_ptr<RedisStream> stream);
  void Greet();
  void Queue(const std::vector<std::string>& argv, Pending pending);
  void OnIo(uint32_t ready);
  // Reads and hands out every complete reply; false once closed.
  bool ReadAll();
  void WriteSome();
  void Dispatch(Reply reply);
  void OnGreeted(Greeting greeting, const Reply& reply);
  void OnPush(const RedisValue& push);
  // The status a refused greeting command stands for.
  absl::Status Refused(Greeting greeting, const absl::Status& error) const;
  void Watch();
  // Closes it on its own: `closed` is told, then what waits fails.
  void Fail(const absl::Status& why);
  void FailWaiting(const absl::Status& why);

  loop::EventLoop* const loop_;
  const Settings settings_;
  const Handlers handlers_;
  const std::unique_ptr<RedisStream> stream_;
  // The reply being parsed (before reader_, which counts into it).
  ReplyBudget budget_;
  redisReader* const reader_;
  const absl::Time started_;
  std::string out_;  // RESP not yet written
  std::string in_;   // bytes read, on their way to the reader
  std::deque<Pending> waiting_;
  int greetings_left_ = 0;
  bool ready_ = false;
  bool closed_ = false;
  int watched_fd_ = -1;  // the stream's socket the loop watches
  uint32_t watched_ = 0;
  absl::Status deferred_;  // a write error met inside Flush()
};

}  // namespace fleet

#endif  // VIN_FLEET_REDIS_CONNECTION_H_
