// A small Redis client for fleet mode, over hiredis's async API and driven
// by the engine's event loop (docs/DESIGN.md "Threads"): its two
// connections, one for commands (pipelined) and one holding a subscription,
// are I/O sources of the loop, and its timers are the loop's. No thread of
// its own, and no caller ever waits on Redis: a command's callback runs on
// the loop, in a later turn (never inside Command()), with an error when
// Redis is down, when the command waited longer than the timeout (the
// connection is then dropped and made again), or when it failed. Reconnects
// on its own, backing off from 100 ms to 1 s, and says when Redis goes down
// or comes back (once per change). Redis is up once it has answered on the
// commands' connection: a new connection greets it (PING, or SELECT for a
// database) and counts as connected only when the reply comes, so a port
// that accepts but does not answer (a stopped or loading Redis) is down.
// It has joined (OnJoined) the first time it is up and, when there is a
// subscription, Redis has confirmed it (DESIGN rule 16).
//
// Thread contract: constructed on any thread; Attach() once; from then on,
// every call on the loop's thread, except up(), errors() and commands(),
// which any thread may read. Detach() (or the destructor) on the loop's
// thread, while the loop still exists.
#ifndef VIN_FLEET_REDIS_CLIENT_H_
#define VIN_FLEET_REDIS_CLIENT_H_

#include <algorithm>
#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "loop/event_loop.h"

struct redisAsyncContext;
struct redisReply;

namespace fleet {

// One reply, or one element of an array reply.
struct RedisValue {
  enum class Type { kNil, kString, kInteger, kArray, kStatus };
  Type type = Type::kNil;
  std::string str;       // kString, kStatus
  long long integer = 0;  // kInteger
  std::vector<RedisValue> elements;  // kArray
};

// hiredis's reply as a RedisValue (an error reply is a kStatus here; the
// client turns it into an error status).
RedisValue ValueOf(const redisReply* reply);

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
  // (channel, message) of a subscription; runs on the loop.
  using MessageHandler = std::function<void(std::string, std::string)>;
  // Redis went down (false) or came back (true); runs on the loop.
  using StateHandler = std::function<void(bool up)>;

  RedisClient(RedisAddress address, absl::Duration timeout,
              StateHandler on_state);
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

  bool up() const { return up_.load(); }
  uint64_t errors() const { return errors_.load(); }
  // Commands sent (each one round trip, though pipelined with others).
  uint64_t commands() const { return commands_sent_.load(); }

 private:
  struct Pending {
    Callback done;
    absl::Time queued;
  };
  struct Unsent {
    std::vector<std::string> argv;
    Pending pending;
  };
  // One hiredis context, its watch on the loop, and its commands in the
  // order Redis answers them.
  struct Connection {
    RedisClient* client = nullptr;
    std::weak_ptr<Connection> self;  // for the loop's handler
    bool subscriber = false;
    redisAsyncContext* context = nullptr;
    int fd = -1;
    bool reading = false;
    bool writing = false;
    bool connected = false;
    bool ready = false;  // connected, and Redis answered its greeting
    bool subscribed = false;  // the subscriber: Redis confirmed SUBSCRIBE
    bool gone = false;   // hiredis freed the context
    absl::Time started;
    std::deque<Unsent> unsent;    // commands queued until it is ready
    std::deque<Pending> waiting;  // commands sent, in the order of replies
    std::string lost_because;     // what the commands still waiting are told
  };
  // A connection slot: the live connection, or when to make it again.
  struct Slot {
    std::shared_ptr<Connection> connection;
    absl::Time reconnect_at = absl::InfinitePast();
    absl::Duration backoff = absl::Milliseconds(100);
    // The next connect waits the backoff, which doubles up to its cap.
    void BackOff(absl::Time now, absl::Duration max) {
      reconnect_at = now + backoff;
      backoff = std::min(backoff * 2, max);
    }
  };

  void Connect(Slot* slot, bool subscriber);
  // The connection is over (hiredis freed it, or it failed to connect).
  void Lost(Connection* c);
  // Frees a live connection, failing what waits on it with `why`.
  void Drop(Slot* slot, const std::string& why);
  Slot* SlotOf(const Connection* c);
  void Rewatch(Connection* c);
  // hiredis's adapter hooks: reading or writing interest on or off.
  static void SetInterest(void* connection, bool Connection::*which, bool on);
  void OnConnected(Connection* c);
  void OnReady(Connection* c);
  void Send(Connection* c, const std::vector<std::string>& argv,
            Pending pending);
  void NoteUp(bool up);
  // Tells OnJoined's handler, the first time both connections are in place.
  void MaybeJoined();
  // Reconnects what is due and drops what is late; then sleeps until the
  // next of those times.
  void Tick();
  void WakeAt(absl::Time at);
  // Runs `done` with `error` in a later turn of the loop.
  void FailLater(Callback done, absl::Status error);

  static void OnReply(redisAsyncContext* ac, void* reply, void* privdata);
  // The reply to a connection's greeting (SELECT, or the commands' PING).
  static void OnGreeted(redisAsyncContext* ac, void* reply, void* privdata);
  static void OnMessage(redisAsyncContext* ac, void* reply, void* privdata);
  static void OnConnect(const redisAsyncContext* ac, int status);
  static void OnDisconnect(const redisAsyncContext* ac, int status);

  const RedisAddress address_;
  const absl::Duration timeout_;
  const StateHandler on_state_;
  std::atomic<bool> up_{false};
  std::atomic<uint64_t> errors_{0};
  std::atomic<uint64_t> commands_sent_{0};

  // The loop's thread only, from Attach on.
  loop::EventLoop* loop_ = nullptr;
  Slot commands_;
  Slot subscriber_;
  // Connections lost while detached, until the destructor (hiredis may
  // still call their hooks).
  std::vector<std::shared_ptr<Connection>> graveyard_;
  std::string channel_;
  MessageHandler on_message_;
  bool state_known_ = false;
  bool reported_up_ = false;
  std::function<void()> on_joined_;
  bool joined_ = false;
  retry::Scheduler::TimerId timer_ = 0;
  absl::Time timer_at_ = absl::InfiniteFuture();
};

}  // namespace fleet

#endif  // VIN_FLEET_REDIS_CLIENT_H_
