#include "fleet/redis_connection.h"

#include <hiredis/hiredis.h>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace fleet {
namespace {

// Read from the socket at a time, before the replies in it are handed out.
constexpr size_t kReadChunk = 256 * 1024;

// `argv` as a RESP array of bulk strings, appended to `out`.
void AppendResp(const std::vector<std::string>& argv, std::string* out) {
  absl::StrAppend(out, "*", argv.size(), "\r\n");
  for (const std::string& a : argv) {
    absl::StrAppend(out, "$", a.size(), "\r\n");
    out->append(a);
    out->append("\r\n");
  }
}

}  // namespace

absl::StatusOr<std::shared_ptr<RedisConnection>> RedisConnection::Open(
    loop::EventLoop* loop, Settings settings, Handlers handlers) {
  const RedisAddress& a = *settings.address;
  if (a.tls && settings.tls == nullptr) {
    return absl::FailedPreconditionError(
        "a rediss:// --redis_url needs TLS settings (internal error)");
  }
  auto stream =
      RedisStream::Open(a.host, a.port, a.tls ? settings.tls : nullptr);
  if (!stream.ok()) return stream.status();
  std::shared_ptr<RedisConnection> c(new RedisConnection(
      loop, std::move(settings), std::move(handlers), *std::move(stream)));
  c->Greet();
  c->Watch();
  return c;
}

RedisConnection::RedisConnection(loop::EventLoop* loop, Settings settings,
                                 Handlers handlers,
                                 std::unique_ptr<RedisStream> stream)
    : loop_(loop),
      settings_(std::move(settings)),
      handlers_(std::move(handlers)),
      stream_(std::move(stream)),
      reader_(CreateBoundedReader(&budget_)),
      started_(loop->clock()->Now()) {}

RedisConnection::~RedisConnection() {
  if (!closed_ && watched_fd_ >= 0) loop_->Unwatch(watched_fd_);
  redisReaderFree(reader_);
}

void RedisConnection::Greet() {
  const RedisAddress& a = *settings_.address;
  const bool subscriber = !settings_.subscribe.empty();
  // Queued before any command; Redis answers them first, in this order.
  std::vector<std::pair<std::vector<std::string>, Greeting>> greeting;
  if (!a.password.empty()) {
    greeting.push_back(
        {a.user.empty() ? std::vector<std::string>{"AUTH", a.password}
                        : std::vector<std::string>{"AUTH", a.user, a.password},
         Greeting::kAuth});
  }
  if (subscriber) {
    greeting.push_back(
        {{"SUBSCRIBE", settings_.subscribe}, Greeting::kSubscribe});
  } else if (a.db != 0) {
    greeting.push_back({{"SELECT", absl::StrCat(a.db)}, Greeting::kSelect});
  } else {
    greeting.push_back({{"PING"}, Greeting::kPing});
  }
  greetings_left_ = static_cast<int>(greeting.size());
  for (auto& [argv, which] : greeting) {
    Pending p;
    p.queued = started_;
    p.greeting = which;
    Queue(argv, std::move(p));
  }
}

void RedisConnection::Send(const std::vector<std::string>& argv,
                           Callback done) {
  Pending p;
  p.done = std::move(done);
  p.queued = loop_->clock()->Now();
  Queue(argv, std::move(p));
}

void RedisConnection::Queue(const std::vector<std::string>& argv,
                            Pending pending) {
  AppendResp(argv, &out_);
  waiting_.push_back(std::move(pending));
  if (!closed_) Watch();
}

absl::Time RedisConnection::oldest() const {
  return waiting_.empty() ? absl::InfiniteFuture() : waiting_.front().queued;
}

void RedisConnection::Flush() {
  if (closed_ || !stream_->established() || !deferred_.ok()) return;
  auto n = stream_->Write(out_);
  if (!n.ok()) {
    deferred_ = n.status();  // the loop's handler fails it, not the caller
    watched_ = loop::EventLoop::kWritable;
    watched_fd_ = stream_->fd();
    loop_
        ->Watch(stream_->fd(), loop::EventLoop::kWritable,
                [weak = weak_from_this()](uint32_t ready) {
                  if (auto c = weak.lock()) c->OnIo(ready);
                })
        .IgnoreError();
    return;
  }
  out_.erase(0, *n);
  Watch();
}

void RedisConnection::Watch() {
  if (closed_ || !deferred_.ok()) return;
  uint32_t want = 0;
  const uint32_t s = stream_->wants();
  if (!stream_->established()) {
    want = ((s & RedisStream::kRead) ? loop::EventLoop::kReadable : 0) |
           ((s & RedisStream::kWrite) ? loop::EventLoop::kWritable : 0);
  } else {
    want = loop::EventLoop::kReadable;
    if (!out_.empty() || (s & RedisStream::kWrite)) {
      want |= loop::EventLoop::kWritable;
    }
  }
  if (want == watched_ && stream_->fd() == watched_fd_) return;
  watched_ = want;
  watched_fd_ = stream_->fd();
  // Watch fails only for a descriptor epoll refuses; the connection then
  // hears nothing, and RedisClient's deadline drops it.
  loop_
      ->Watch(stream_->fd(), want,
              [weak = weak_from_this()](uint32_t ready) {
                if (auto c = weak.lock()) c->OnIo(ready);
              })
      .IgnoreError();
}

void RedisConnection::OnIo(uint32_t) {
  if (closed_) return;
  auto self = shared_from_this();  // a callback may let go of it
  if (!deferred_.ok()) {
    Fail(deferred_);
    return;
  }
  if (!stream_->established()) {
    auto progress = stream_->Connect();
    if (!progress.ok()) {
      Fail(progress.status());
      return;
    }
    if (*progress == RedisStream::Progress::kRefused) {
      // The next address of the name, on another socket.
      loop_->Unwatch(watched_fd_);
      watched_fd_ = -1;
      if (absl::Status s = stream_->ConnectNext(); !s.ok()) {
        Fail(s);
        return;
      }
    }
    if (*progress != RedisStream::Progress::kEstablished) {
      Watch();
      return;
    }
  }
  if (!ReadAll()) return;
  WriteSome();
  if (!closed_) Watch();
}

bool RedisConnection::ReadAll() {
  while (!closed_) {
    in_.clear();
    auto n = stream_->Read(&in_, kReadChunk);
    if (!n.ok()) {
      Fail(n.status());
      return false;
    }
    if (*n == 0) return true;
    if (redisReaderFeed(reader_, in_.data(), in_.size()) != REDIS_OK) {
      Fail(absl::DataLossError(
          absl::StrCat("redis's answer does not parse: ", reader_->errstr)));
      return false;
    }
    while (!closed_) {
      void* raw = nullptr;
      if (redisReaderGetReply(reader_, &raw) != REDIS_OK) {
        Fail(absl::DataLossError(
            budget_.exceeded || budget_.malformed
                ? absl::StrCat("redis sent ", budget_.Describe(), ": dropped")
                : absl::StrCat("redis's answer does not parse as RESP: ",
                               reader_->errstr)));
        return false;
      }
      if (raw == nullptr) break;
      budget_ = ReplyBudget{};  // the next reply's
      auto* reply = static_cast<redisReply*>(raw);
      Reply r = ReplyOf(reply);
      freeReplyObject(reply);
      Dispatch(std::move(r));
    }
    if (!closed_ && reader_->len - reader_->pos > kMaxBufferedReply) {
      Fail(absl::DataLossError(absl::StrCat("redis sent a reply larger than ",
                                            kMaxBufferedReply >> 20,
                                            " MiB: dropped")));
      return false;
    }
    if (*n < kReadChunk) return !closed_;
  }
  return false;
}

void RedisConnection::WriteSome() {
  while (!closed_ && !out_.empty()) {
    auto n = stream_->Write(out_);
    if (!n.ok()) {
      Fail(n.status());
      return;
    }
    if (*n == 0) return;
    out_.erase(0, *n);
  }
}

void RedisConnection::Dispatch(Reply reply) {
  if (waiting_.empty()) {
    if (!settings_.subscribe.empty() && reply.ok()) {
      OnPush(*reply);
    } else {
      Fail(absl::DataLossError("redis sent a reply nothing asked for"));
    }
    return;
  }
  Pending p = std::move(waiting_.front());
  waiting_.pop_front();
  if (p.greeting != Greeting::kNone) {
    OnGreeted(p.greeting, reply);
    return;
  }
  p.done(std::move(reply));
}

absl::Status RedisConnection::Refused(Greeting greeting,
                                      const absl::Status& error) const {
  const RedisAddress& a = *settings_.address;
  const absl::string_view text = error.message();  // "redis: <its text>"
  const char* command = greeting == Greeting::kAuth     ? "AUTH"
                        : greeting == Greeting::kSelect ? "SELECT"
                        : greeting == Greeting::kPing   ? "PING"
                                                        : "SUBSCRIBE";
  if (greeting == Greeting::kAuth) {
    return absl::PermissionDeniedError(absl::StrCat(
        "redis at ", a.Endpoint(), " refused AUTH",
        a.user.empty()
            ? std::string(" (password only)")
            : absl::StrCat(" as user \"", PrintableText(a.user), "\""),
        ": ", text,
        "; check the credentials of --redis_url or "
        "--redis_password_file"));
  }
  if (absl::StrContains(text, "NOAUTH")) {
    return absl::UnauthenticatedError(absl::StrCat(
        "redis at ", a.Endpoint(), " wants credentials (", command, ": ", text,
        "): give them as redis://user:password@host in --redis_url, or "
        "--redis_password_file"));
  }
  if (absl::StrContains(text, "NOPERM")) {
    return absl::PermissionDeniedError(absl::StrCat(
        "the redis user may not ", command, " (", text,
        "); see README \"Running a fleet\" for the ACL a replica needs"));
  }
  if (greeting == Greeting::kSelect) {
    return absl::FailedPreconditionError(absl::StrCat(
        "redis at ", a.Endpoint(), " refused SELECT ", a.db, ": ", text));
  }
  return absl::UnavailableError(absl::StrCat(command, " failed: ", text));
}

void RedisConnection::OnGreeted(Greeting greeting, const Reply& reply) {
  if (!reply.ok()) {
    Fail(Refused(greeting, reply.status()));
    return;
  }
  if (greeting == Greeting::kSubscribe) {
    // The confirmation: ["subscribe", channel, count].
    if (reply->type != RedisValue::Type::kArray || reply->elements.empty() ||
        reply->elements[0].str != "subscribe") {
      Fail(absl::DataLossError("redis did not confirm the subscription"));
      return;
    }
  }
  if (--greetings_left_ > 0) return;
  ready_ = true;
  if (handlers_.ready) handlers_.ready();
}

void RedisConnection::OnPush(const RedisValue& push) {
  if (push.type != RedisValue::Type::kArray || push.elements.size() != 3 ||
      push.elements[0].str != "message") {
    return;  // (a later subscribe's confirmation; nothing else is asked for)
  }
  if (handlers_.message) {
    handlers_.message(push.elements[1].str, push.elements[2].str);
  }
}

void RedisConnection::Fail(const absl::Status& why) {
  if (closed_) return;
  auto self = shared_from_this();
  closed_ = true;
  if (watched_fd_ >= 0) loop_->Unwatch(watched_fd_);
  if (handlers_.closed) handlers_.closed(why);
  FailWaiting(why);
}

void RedisConnection::Close(const absl::Status& why) {
  if (closed_) return;
  auto self = shared_from_this();
  closed_ = true;
  if (watched_fd_ >= 0) loop_->Unwatch(watched_fd_);
  FailWaiting(why);
}

void RedisConnection::FailWaiting(const absl::Status& why) {
  std::deque<Pending> waiting;
  waiting.swap(waiting_);
  for (Pending& p : waiting) {
    if (p.greeting == Greeting::kNone) p.done(why);
  }
}

}  // namespace fleet
