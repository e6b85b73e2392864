#include "fleet/redis_client.h"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace fleet {
namespace {

constexpr absl::Duration kFirstBackoff = absl::Milliseconds(100);
constexpr absl::Duration kMaxBackoff = absl::Seconds(1);

// A reply as our value, or the error it is.
RedisClient::Reply FromReply(const redisReply* r, const std::string& lost) {
  if (r == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("redis: ", lost.empty() ? "connection lost" : lost));
  }
  if (r->type == REDIS_REPLY_ERROR) {
    return absl::InternalError(absl::StrCat("redis: ", std::string(r->str, r->len)));
  }
  return ValueOf(r);
}

}  // namespace

RedisClient::RedisClient(RedisAddress address, absl::Duration timeout,
                         StateHandler on_state)
    : address_(std::move(address)),
      timeout_(timeout),
      on_state_(std::move(on_state)) {}

RedisClient::~RedisClient() { Detach(); }

void RedisClient::Attach(loop::EventLoop* loop) {
  loop_ = loop;
  Connect(&commands_, /*subscriber=*/false);
  if (!channel_.empty()) Connect(&subscriber_, /*subscriber=*/true);
  Tick();
}

void RedisClient::Detach() {
  if (loop_ == nullptr) return;
  loop_->AssertOnLoopThread();
  Drop(&commands_, "the client was closed");
  Drop(&subscriber_, "the client was closed");
  if (timer_ != 0) loop_->io_timers().Cancel(timer_);
  timer_ = 0;
  loop_ = nullptr;
  up_.store(false);
}

void RedisClient::Subscribe(std::string channel, MessageHandler on_message) {
  channel_ = std::move(channel);
  on_message_ = std::move(on_message);
  if (loop_ != nullptr && subscriber_.connection == nullptr) {
    Connect(&subscriber_, /*subscriber=*/true);
    Tick();
  }
}

void RedisClient::FailLater(Callback done, absl::Status error) {
  errors_.fetch_add(1);
  if (loop_ == nullptr) {
    done(std::move(error));  // no loop to defer to: the caller is told now
    return;
  }
  loop_->Post([done = std::move(done), error = std::move(error)]() mutable {
    done(std::move(error));
  });
}

void RedisClient::Command(std::vector<std::string> argv, Callback done) {
  Connection* c = commands_.connection.get();
  if (loop_ == nullptr || c == nullptr) {
    FailLater(std::move(done), absl::UnavailableError("redis is unreachable"));
    return;
  }
  loop_->AssertOnLoopThread();
  Pending pending{std::move(done), loop_->clock()->Now()};
  if (!c->ready) {  // waits for the connection (Tick drops a late one)
    c->unsent.push_back({std::move(argv), std::move(pending)});
    return;
  }
  Send(c, argv, std::move(pending));
}

void RedisClient::Send(Connection* c, const std::vector<std::string>& argv,
                       Pending pending) {
  std::vector<const char*> args;
  std::vector<size_t> lens;
  args.reserve(argv.size());
  lens.reserve(argv.size());
  for (const std::string& a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  if (redisAsyncCommandArgv(c->context, &RedisClient::OnReply, c,
                            static_cast<int>(args.size()), args.data(),
                            lens.data()) != REDIS_OK) {
    FailLater(std::move(pending.done),
              absl::UnavailableError("redis: connection lost"));
    return;
  }
  commands_sent_.fetch_add(1);
  c->waiting.push_back(std::move(pending));
  if (c->waiting.size() == 1) WakeAt(c->waiting.front().queued + timeout_);
}

void RedisClient::Flush() {
  Connection* c = commands_.connection.get();
  if (loop_ == nullptr || c == nullptr || !c->ready || c->gone) return;
  loop_->AssertOnLoopThread();
  // The synchronous layer's write: unlike redisAsyncHandleWrite it never
  // disconnects (which would run callbacks inside the caller's code); an
  // error stays in the context for the loop's handler to find.
  int done = 0;
  (void)redisBufferWrite(&c->context->c, &done);
}

// ---- Connections ----

void RedisClient::Connect(Slot* slot, bool subscriber) {
  auto c = std::make_shared<Connection>();
  c->client = this;
  c->self = c;
  c->subscriber = subscriber;
  c->started = loop_->clock()->Now();
  redisAsyncContext* ac =
      redisAsyncConnect(address_.host.c_str(), address_.port);
  if (ac == nullptr || ac->err != 0) {
    if (ac != nullptr) redisAsyncFree(ac);
    slot->BackOff(c->started, kMaxBackoff);
    if (!subscriber) NoteUp(false);
    return;
  }
  c->context = ac;
  c->fd = ac->c.fd;
  redisEnableKeepAlive(&ac->c);
  ac->data = c.get();
  ac->ev.data = c.get();
  ac->ev.addRead = [](void* p) { SetInterest(p, &Connection::reading, true); };
  ac->ev.delRead = [](void* p) { SetInterest(p, &Connection::reading, false); };
  ac->ev.addWrite = [](void* p) { SetInterest(p, &Connection::writing, true); };
  ac->ev.delWrite = [](void* p) { SetInterest(p, &Connection::writing, false); };
  ac->ev.cleanup = [](void* p) {
    auto* c = static_cast<Connection*>(p);
    c->reading = c->writing = false;
    c->client->Rewatch(c);
    c->gone = true;
  };
  redisAsyncSetConnectCallback(ac, &RedisClient::OnConnect);
  redisAsyncSetDisconnectCallback(ac, &RedisClient::OnDisconnect);
  slot->connection = c;
  // Writable means connected (or failed): hiredis tells which.
  c->reading = c->writing = true;
  Rewatch(c.get());
  // Queued until the connection is made. A connection is ready when Redis
  // answers this: SELECT for a database; else, on the commands' connection,
  // a PING (the subscriber's answer is its subscription's confirmation).
  if (address_.db != 0) {
    redisAsyncCommand(ac, &RedisClient::OnGreeted, c.get(), "SELECT %d",
                      address_.db);
  } else if (!subscriber) {
    redisAsyncCommand(ac, &RedisClient::OnGreeted, c.get(), "PING");
  }
  if (subscriber) {
    redisAsyncCommand(ac, &RedisClient::OnMessage, c.get(), "SUBSCRIBE %b",
                      channel_.data(), channel_.size());
  }
}

void RedisClient::Rewatch(Connection* c) {
  if (loop_ == nullptr || c->gone) return;
  const uint32_t events = (c->reading ? loop::EventLoop::kReadable : 0) |
                          (c->writing ? loop::EventLoop::kWritable : 0);
  if (events == 0) {
    loop_->Unwatch(c->fd);
    return;
  }
  std::weak_ptr<Connection> weak = c->self;
  // Watch fails only for a descriptor epoll refuses; hiredis then sees the
  // error on its next read, or the deadline drops the connection.
  (void)loop_->Watch(c->fd, events, [weak](uint32_t ready) {
    std::shared_ptr<Connection> c = weak.lock();
    if (c == nullptr || c->gone) return;
    if (ready & (loop::EventLoop::kReadable | loop::EventLoop::kError)) {
      redisAsyncHandleRead(c->context);
    }
    if (!c->gone && (ready & loop::EventLoop::kWritable)) {
      redisAsyncHandleWrite(c->context);
    }
  });
}

void RedisClient::SetInterest(void* connection, bool Connection::*which,
                              bool on) {
  auto* c = static_cast<Connection*>(connection);
  if (c->*which == on) return;
  c->*which = on;
  c->client->Rewatch(c);
}

RedisClient::Slot* RedisClient::SlotOf(const Connection* c) {
  return c->subscriber ? &subscriber_ : &commands_;
}

void RedisClient::OnConnected(Connection* c) {
  c->connected = true;
  if (address_.db == 0 && c->subscriber) OnReady(c);  // else: OnGreeted
}

void RedisClient::OnReady(Connection* c) {
  c->ready = true;
  SlotOf(c)->backoff = kFirstBackoff;  // Redis answered: a working connection
  if (c->subscriber) return;
  NoteUp(true);
  MaybeJoined();
  std::deque<Unsent> unsent;
  unsent.swap(c->unsent);
  for (Unsent& u : unsent) Send(c, u.argv, std::move(u.pending));
}

void RedisClient::Lost(Connection* c) {
  Slot* slot = SlotOf(c);
  if (slot->connection.get() != c) return;
  std::deque<Unsent> unsent;
  unsent.swap(c->unsent);
  for (Unsent& u : unsent) {
    errors_.fetch_add(1);
    u.pending.done(absl::UnavailableError(absl::StrCat(
        "redis: ", c->lost_because.empty() ? "unreachable" : c->lost_because)));
  }
  if (loop_ == nullptr) {
    graveyard_.push_back(std::move(slot->connection));
    return;
  }
  // Kept alive until this turn's hiredis calls are over.
  loop_->Post([dead = std::move(slot->connection)] {});
  const absl::Time now = loop_->clock()->Now();
  if (c->ready) {
    slot->reconnect_at = now;  // a working connection: at once, the first time
  } else {
    slot->BackOff(now, kMaxBackoff);
  }
  if (!c->subscriber) NoteUp(false);
  errors_.fetch_add(1);
  WakeAt(slot->reconnect_at);
}

void RedisClient::Drop(Slot* slot, const std::string& why) {
  std::shared_ptr<Connection> c = slot->connection;
  if (c == nullptr) return;
  c->lost_because = why;
  // Runs the waiting commands' callbacks (with no reply), then Lost().
  redisAsyncFree(c->context);
  if (slot->connection == c) Lost(c.get());  // never connected: no callback
}

void RedisClient::NoteUp(bool up) {
  up_.store(up);
  const bool changed = !state_known_ || reported_up_ != up;
  state_known_ = true;
  reported_up_ = up;
  if (changed && on_state_) on_state_(up);
}

void RedisClient::MaybeJoined() {
  if (joined_ || commands_.connection == nullptr ||
      !commands_.connection->ready) {
    return;
  }
  if (!channel_.empty() && (subscriber_.connection == nullptr ||
                            !subscriber_.connection->subscribed)) {
    return;
  }
  joined_ = true;
  if (on_joined_) on_joined_();
}

void RedisClient::WakeAt(absl::Time at) {
  if (loop_ == nullptr) return;
  if (timer_ != 0 && timer_at_ <= at) return;  // it looks again then
  if (timer_ != 0) loop_->io_timers().Cancel(timer_);
  timer_at_ = at;
  timer_ = loop_->io_timers().ScheduleAt(at, [this] {
    timer_ = 0;
    timer_at_ = absl::InfiniteFuture();
    Tick();
  });
}

void RedisClient::Tick() {
  if (loop_ == nullptr) return;
  const absl::Time now = loop_->clock()->Now();
  absl::Time next = absl::InfiniteFuture();
  for (Slot* slot : {&commands_, &subscriber_}) {
    const bool wanted = slot == &commands_ || !channel_.empty();
    if (slot->connection == nullptr) {
      if (!wanted) continue;
      if (now >= slot->reconnect_at) Connect(slot, slot == &subscriber_);
      if (slot->connection == nullptr) {
        next = std::min(next, slot->reconnect_at);
        continue;
      }
    }
    Connection* c = slot->connection.get();
    // A connection that takes too long to open, or a command that waits
    // too long for its reply, means Redis is unreachable or stuck.
    const absl::Time due =
        !c->ready            ? c->started + timeout_
        : !c->waiting.empty() ? c->waiting.front().queued + timeout_
                              : absl::InfiniteFuture();
    if (now >= due) {
      Drop(slot, c->ready ? "redis command timed out"
                          : "redis did not accept the connection in time");
      next = std::min(next, slot->reconnect_at);
    } else {
      next = std::min(next, due);
    }
  }
  if (next != absl::InfiniteFuture()) WakeAt(next);
}

// ---- hiredis callbacks (on the loop, inside redisAsyncHandle*/Free) ----

void RedisClient::OnReply(redisAsyncContext*, void* reply, void* privdata) {
  auto* c = static_cast<Connection*>(privdata);
  if (c->waiting.empty()) return;
  Pending p = std::move(c->waiting.front());
  c->waiting.pop_front();
  Reply r = FromReply(static_cast<redisReply*>(reply), c->lost_because);
  if (!r.ok()) c->client->errors_.fetch_add(1);
  if (!c->waiting.empty() && !c->gone && reply != nullptr) {
    c->client->WakeAt(c->waiting.front().queued + c->client->timeout_);
  }
  p.done(std::move(r));
}

void RedisClient::OnGreeted(redisAsyncContext* ac, void* reply,
                            void* privdata) {
  auto* c = static_cast<Connection*>(privdata);
  const auto* r = static_cast<redisReply*>(reply);
  if (r == nullptr) return;  // going already
  if (r->type == REDIS_REPLY_ERROR) {
    c->lost_because =
        absl::StrCat(c->client->address_.db != 0 ? "SELECT" : "PING",
                     " failed: ", std::string(r->str, r->len));
    redisAsyncFree(ac);  // after this callback
    return;
  }
  c->client->OnReady(c);
}

void RedisClient::OnMessage(redisAsyncContext*, void* reply, void* privdata) {
  auto* c = static_cast<Connection*>(privdata);
  const auto* r = static_cast<redisReply*>(reply);
  if (r == nullptr || r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
      r->element[0]->type != REDIS_REPLY_STRING) {
    return;  // the connection going
  }
  const absl::string_view kind(r->element[0]->str, r->element[0]->len);
  if (kind == "subscribe") {  // the subscription's confirmation
    c->subscribed = true;
    c->client->MaybeJoined();
    return;
  }
  if (kind != "message") return;
  c->client->on_message_(std::string(r->element[1]->str, r->element[1]->len),
                         std::string(r->element[2]->str, r->element[2]->len));
}

void RedisClient::OnConnect(const redisAsyncContext* ac, int status) {
  auto* c = static_cast<Connection*>(ac->data);
  if (status == REDIS_OK) {
    c->client->OnConnected(c);
  } else {
    c->client->Lost(c);  // hiredis frees the context next
  }
}

void RedisClient::OnDisconnect(const redisAsyncContext* ac, int) {
  auto* c = static_cast<Connection*>(ac->data);
  c->client->Lost(c);
}

}  // namespace fleet
