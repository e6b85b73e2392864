// A small Redis client for fleet mode, driven by the engine's event loop
// (docs/DESIGN.md "Threads and locks"): its two connections
// (fleet/redis_connection.h), one for commands (pipelined) and one holding a
// subscription, are I/O sources of the loop, and its timers are the loop's. No
// thread of its own, and no caller ever waits on Redis: a command's callback
// runs on the loop, in a later turn (never inside Command()), with an error
// when Redis is down, when the command waited longer than the timeout (the
// connection is then dropped and made again), or when it failed. Reconnects on
// its own, backing off from 100 ms to 1 s, and says when Redis goes down or
// comes back (once per change).
//
// A connection counts only once Redis has answered its greeting (AUTH with
// the URL's credentials, then SELECT or PING; the subscriber's SUBSCRIBE),
// so a port that accepts but does not answer (a stopped or loading Redis)
// is down, and so is a Redis that refuses the credentials or whose TLS
// certificate does not verify. Such a refusal is a problem of the
// configuration, not of the network: OnProblem's handler hears it (once
// per distinct reason, until Redis answers again). It has joined
// (OnJoined) the first time it is up and, when there is a subscription,
// Redis has confirmed it (DESIGN rule 16).
//
// The transport is the service's own (a non-blocking socket, OpenSSL for
// rediss://); hiredis only parses replies (DESIGN "Beyond one machine").
//
// Thread contract: constructed on any thread; Attach() once; from then on,
// every call on the loop's thread, except up(), errors() and commands(),
// which any thread may read. Detach() (or the destructor) on the loop's
// thread, while the loop still exists.
#ifndef VIN_FLEET_REDIS_CLIENT_H_
#define VIN_FLEET_REDIS_CLIENT_H_

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fleet/redis_connection.h"
#include "fleet/redis_tls.h"
#include "fleet/redis_url.h"
#include "fleet/redis_value.h"
#include "loop/event_loop.h"

namespace fleet {

class RedisClient {
 public:
  using Reply = absl::StatusOr<RedisValue>;
  using Callback = std::function<void(Reply)>;
  // (channel, message) of a subscription; runs on the loop.
  using MessageHandler = std::function<void(std::string, std::string)>;
  // Redis went down (false) or came back (true); runs on the loop.
  using StateHandler = std::function<void(bool up)>;

  // `tls`: needed for a rediss:// address (else every connection fails
  // saying so); ignored for redis://.
  RedisClient(RedisAddress address, absl::Duration timeout,
              StateHandler on_state,
              std::shared_ptr<const RedisTls> tls = nullptr);
  ~RedisClient();

  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  // Binds the client to `loop` (not owned) and starts connecting.
  void Attach(loop::EventLoop* loop);
  // Closes both connections and forgets the loop: the commands still
  // waiting fail now (their callbacks run inside Detach), and nothing runs
  // on the loop afterwards. Not from inside one of this client's callbacks.
  void Detach();
  bool attached() const { return loop_ != nullptr; }

  // Sends a command; `done` gets its reply (a Redis error reply is an error
  // status too). Before Attach, or after Detach, it fails as unreachable.
  void Command(std::vector<std::string> argv, Callback done);
  // Writes the commands sent so far to Redis now, not on the loop's next
  // turn (as far as the socket takes them; the rest, and any error, the
  // loop's next turn handles). For a command whose effect must be in Redis
  // before something else leaves this process. On the loop; no callback
  // runs inside it.
  void Flush();
  // Subscribes to `channel` (once, before or after Attach; renewed on every
  // reconnect). Before the loop's first turn, for OnJoined to wait for it.
  void Subscribe(std::string channel, MessageHandler on_message);
  // Runs `handler` once, on the loop, the first time Redis has answered on
  // the commands' connection and confirmed the subscription (if any): from
  // then on this client hears the fleet's events. Set before Attach.
  void OnJoined(std::function<void()> handler) {
    on_joined_ = std::move(handler);
  }
  // Where a connection that failed for a reason of the configuration goes
  // (refused credentials, a certificate that does not verify, a host name
  // that does not resolve, a reply that does not parse), on the loop: once
  // per distinct reason until Redis answers. Set before Attach.
  void OnProblem(std::function<void(const absl::Status&)> handler) {
    on_problem_ = std::move(handler);
  }

  bool up() const { return up_.load(); }
  uint64_t errors() const { return errors_.load(); }
  // Commands sent (each one round trip, though pipelined with others).
  uint64_t commands() const { return commands_sent_.load(); }

 private:
  // A connection slot: the live connection, or when to make it again.
  struct Slot {
    std::shared_ptr<RedisConnection> connection;
    absl::Time reconnect_at = absl::InfinitePast();
    absl::Duration backoff = absl::Milliseconds(100);
    // The next connect waits the backoff, which doubles up to its cap.
    void BackOff(absl::Time now, absl::Duration max) {
      reconnect_at = now + backoff;
      backoff = std::min(backoff * 2, max);
    }
  };

  void Connect(Slot* slot);
  bool IsSubscriber(const Slot* slot) const { return slot == &subscriber_; }
  void OnReady(Slot* slot);
  // The connection of `slot` is over (it failed, or was dropped): when to
  // make it again, and what Redis's state is now.
  void Lost(Slot* slot, bool was_ready, const absl::Status& why);
  // Drops a live connection, failing what waits on it with `why`.
  void Drop(Slot* slot, const std::string& why);
  void NoteUp(bool up);
  void NoteProblem(const absl::Status& why);
  // Tells OnJoined's handler, the first time both connections are in place.
  void MaybeJoined();
  // Reconnects what is due and drops what is late; then sleeps until the
  // next of those times.
  void Tick();
  void WakeAt(absl::Time at);
  // Runs `done` with `error` in a later turn of the loop.
  void FailLater(Callback done, absl::Status error);

  const RedisAddress address_;
  const absl::Duration timeout_;
  const StateHandler on_state_;
  const std::shared_ptr<const RedisTls> tls_;
  std::atomic<bool> up_{false};
  std::atomic<uint64_t> errors_{0};
  std::atomic<uint64_t> commands_sent_{0};

  // The loop's thread only, from Attach on.
  loop::EventLoop* loop_ = nullptr;
  Slot commands_;
  Slot subscriber_;
  std::string channel_;
  MessageHandler on_message_;
  bool state_known_ = false;
  bool reported_up_ = false;
  std::function<void()> on_joined_;
  bool joined_ = false;
  std::function<void(const absl::Status&)> on_problem_;
  // The problems told since Redis last answered (each once; the two
  // connections may fail in turn with different texts).
  absl::flat_hash_set<std::string> problems_told_;
  retry::Scheduler::TimerId timer_ = 0;
  absl::Time timer_at_ = absl::InfiniteFuture();
};

}  // namespace fleet

#endif  // VIN_FLEET_REDIS_CLIENT_H_
