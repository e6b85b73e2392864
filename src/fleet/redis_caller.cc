#include "fleet/redis_caller.h"

#include <utility>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"

namespace fleet {

absl::StatusOr<std::unique_ptr<RedisCaller>> RedisCaller::Start(
    RedisAddress address, std::shared_ptr<const RedisTls> tls,
    absl::Duration timeout, RedisClient::StateHandler on_state) {
  absl::StatusOr<std::unique_ptr<loop::EventLoop>> loop =
      loop::EventLoop::Create();
  if (!loop.ok()) return loop.status();
  return std::unique_ptr<RedisCaller>(
      new RedisCaller(*std::move(loop), std::move(address), std::move(tls),
                      timeout, std::move(on_state)));
}

RedisCaller::RedisCaller(std::unique_ptr<loop::EventLoop> loop,
                         RedisAddress address,
                         std::shared_ptr<const RedisTls> tls,
                         absl::Duration timeout,
                         RedisClient::StateHandler on_state)
    : loop_(std::move(loop)),
      client_(
          std::move(address), timeout,
          on_state ? std::move(on_state) : [](bool) {}, std::move(tls)) {
  loop_->Post([this] { client_.Attach(loop_.get()); });
  thread_ = std::thread([this] {
    while (!stop_.load()) loop_->RunOnce(absl::Milliseconds(200));
    client_.Detach();
  });
}

RedisCaller::~RedisCaller() {
  stop_.store(true);
  loop_->Wakeup();
  thread_.join();
}

RedisCaller::Reply RedisCaller::Call(std::vector<std::string> argv) {
  std::vector<std::vector<std::string>> one;
  one.push_back(std::move(argv));
  return std::move(CallAll(std::move(one)).front());
}

std::vector<RedisCaller::Reply> RedisCaller::CallAll(
    std::vector<std::vector<std::string>> commands) {
  const size_t n = commands.size();
  std::vector<Reply> replies(n, absl::UnavailableError("redis: no reply"));
  if (n == 0) return replies;
  absl::Mutex mu;
  size_t left = n;
  absl::Notification all;
  loop_->Post([&] {
    for (size_t i = 0; i < n; ++i) {
      client_.Command(std::move(commands[i]), [&, i](Reply r) {
        // An error of its own: the client fails every command waiting on a
        // dropped connection with copies of one status, whose shared
        // reference count must not cross to the caller's thread.
        replies[i] =
            r.ok() ? std::move(r)
                   : Reply(absl::Status(r.status().code(),
                                        std::string(r.status().message())));
        bool last;
        {
          absl::MutexLock lock(&mu);
          last = --left == 0;
        }
        // The caller returns once told: nothing of its frame after this.
        if (last) all.Notify();
      });
    }
  });
  // Every command gets its callback: a reply, the timeout, or Detach.
  all.WaitForNotification();
  return replies;
}

}  // namespace fleet
