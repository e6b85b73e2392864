#include "fleet/redis_client.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace fleet {
namespace {

constexpr absl::Duration kFirstBackoff = absl::Milliseconds(100);
constexpr absl::Duration kMaxBackoff = absl::Seconds(1);

}  // namespace

RedisClient::RedisClient(RedisAddress address, absl::Duration timeout,
                         StateHandler on_state,
                         std::shared_ptr<const RedisTls> tls)
    : address_(std::move(address)),
      timeout_(timeout),
      on_state_(std::move(on_state)),
      tls_(std::move(tls)) {}

RedisClient::~RedisClient() { Detach(); }

void RedisClient::Attach(loop::EventLoop* loop) {
  loop_ = loop;
  Connect(&commands_);
  if (!channel_.empty()) Connect(&subscriber_);
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
    Connect(&subscriber_);
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
  RedisConnection* c = commands_.connection.get();
  if (loop_ == nullptr || c == nullptr || c->closed()) {
    FailLater(std::move(done), absl::UnavailableError("redis is unreachable"));
    return;
  }
  loop_->AssertOnLoopThread();
  commands_sent_.fetch_add(1);
  c->Send(argv, [this, done = std::move(done)](Reply r) {
    if (!r.ok()) errors_.fetch_add(1);
    done(std::move(r));
  });
  // Queued behind the greeting until the connection is ready; Tick drops
  // a connection (or a command) that takes too long either way.
  if (c->ready()) WakeAt(c->oldest() + timeout_);
}

void RedisClient::Flush() {
  RedisConnection* c = commands_.connection.get();
  if (loop_ == nullptr || c == nullptr || !c->ready()) return;
  loop_->AssertOnLoopThread();
  c->Flush();
}

// ---- Connections ----

void RedisClient::Connect(Slot* slot) {
  const bool subscriber = IsSubscriber(slot);
  RedisConnection::Handlers h;
  h.ready = [this, slot] { OnReady(slot); };
  h.closed = [this, slot](const absl::Status& why) {
    const bool was_ready =
        slot->connection != nullptr && slot->connection->ready();
    auto dead = std::move(slot->connection);  // alive until it returns
    Lost(slot, was_ready, why);
  };
  if (subscriber) {
    h.message = [this](std::string channel, std::string message) {
      if (on_message_) on_message_(std::move(channel), std::move(message));
    };
  }
  auto c = RedisConnection::Open(
      loop_, {&address_, tls_.get(), subscriber ? channel_ : std::string()},
      std::move(h));
  if (!c.ok()) {
    Lost(slot, false, c.status());
    return;
  }
  slot->connection = *std::move(c);
}

void RedisClient::OnReady(Slot* slot) {
  slot->backoff = kFirstBackoff;  // Redis answered: a working connection
  if (!IsSubscriber(slot)) {
    problems_told_.clear();
    NoteUp(true);
    RedisConnection* c = slot->connection.get();
    if (c != nullptr) WakeAt(c->oldest() + timeout_);
  }
  MaybeJoined();
}

void RedisClient::Lost(Slot* slot, bool was_ready, const absl::Status& why) {
  errors_.fetch_add(1);
  NoteProblem(why);
  if (loop_ == nullptr) return;
  const absl::Time now = loop_->clock()->Now();
  if (was_ready) {
    slot->reconnect_at = now;  // a working connection: at once, the first time
  } else {
    slot->BackOff(now, kMaxBackoff);
  }
  if (!IsSubscriber(slot)) NoteUp(false);
  WakeAt(slot->reconnect_at);
}

void RedisClient::Drop(Slot* slot, const std::string& why) {
  std::shared_ptr<RedisConnection> c = std::move(slot->connection);
  if (c == nullptr) return;
  Lost(slot, c->ready(), absl::UnavailableError(why));
  c->Close(absl::UnavailableError(absl::StrCat("redis: ", why)));
}

void RedisClient::NoteUp(bool up) {
  up_.store(up);
  const bool changed = !state_known_ || reported_up_ != up;
  state_known_ = true;
  reported_up_ = up;
  if (changed && on_state_) on_state_(up);
}

void RedisClient::NoteProblem(const absl::Status& why) {
  // Refused, reset, timed out: Redis is down, which NoteUp says. The rest
  // will not pass by itself.
  // (Bounded: a few distinct texts at most, cleared when Redis answers.)
  if (absl::IsUnavailable(why) || !on_problem_ || problems_told_.size() >= 16 ||
      !problems_told_.insert(why.ToString()).second) {
    return;
  }
  on_problem_(why);
}

void RedisClient::MaybeJoined() {
  if (joined_ || commands_.connection == nullptr ||
      !commands_.connection->ready()) {
    return;
  }
  if (!channel_.empty() &&
      (subscriber_.connection == nullptr || !subscriber_.connection->ready())) {
    return;
  }
  joined_ = true;
  if (on_joined_) on_joined_();
}

void RedisClient::WakeAt(absl::Time at) {
  if (loop_ == nullptr || at == absl::InfiniteFuture()) return;
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
      if (now >= slot->reconnect_at) Connect(slot);
      if (slot->connection == nullptr) {
        next = std::min(next, slot->reconnect_at);
        continue;
      }
    }
    RedisConnection* c = slot->connection.get();
    // A connection that takes too long to open and be greeted, or a
    // command that waits too long for its reply, means Redis is
    // unreachable or stuck.
    const absl::Time due = !c->ready() ? c->started() + timeout_
                           : c->oldest() == absl::InfiniteFuture()
                               ? absl::InfiniteFuture()
                               : c->oldest() + timeout_;
    if (now >= due) {
      Drop(slot, c->ready() ? "redis command timed out"
                            : "redis did not answer the connection's "
                              "greeting in time");
      next = std::min(next, slot->reconnect_at);
    } else {
      next = std::min(next, due);
    }
  }
  if (next != absl::InfiniteFuture()) WakeAt(next);
}

}  // namespace fleet
