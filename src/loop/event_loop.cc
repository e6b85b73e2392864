#include "loop/event_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace loop {
namespace {

constexpr int kMaxEvents = 64;

// epoll's data: the descriptor and the generation of its watch, so that an
// event of a descriptor unwatched (and perhaps watched anew) in the same
// turn reaches no handler.
uint64_t Pack(int fd, uint64_t generation) {
  return (generation << 32) | static_cast<uint32_t>(fd);
}

uint32_t EpollEventsOf(uint32_t events) {
  uint32_t out = 0;
  if (events & EventLoop::kReadable) out |= EPOLLIN;
  if (events & EventLoop::kWritable) out |= EPOLLOUT;
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<EventLoop>> EventLoop::Create(
    const retry::Clock* clock) {
  const int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd < 0) {
    return absl::InternalError(
        absl::StrCat("epoll_create1: ", std::strerror(errno)));
  }
  const int wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd < 0) {
    const int err = errno;
    close(epoll_fd);
    return absl::InternalError(absl::StrCat("eventfd: ", std::strerror(err)));
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = Pack(wake_fd, 0);
  if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &ev) != 0) {
    const int err = errno;
    close(wake_fd);
    close(epoll_fd);
    return absl::InternalError(absl::StrCat("epoll_ctl: ", std::strerror(err)));
  }
  return std::unique_ptr<EventLoop>(new EventLoop(
      clock != nullptr ? clock : retry::Clock::Real(), epoll_fd, wake_fd));
}

EventLoop::EventLoop(const retry::Clock* clock, int epoll_fd, int wake_fd)
    : clock_(clock),
      epoll_fd_(epoll_fd),
      wake_fd_(wake_fd),
      scheduler_(clock),
      io_timers_(clock) {}

EventLoop::~EventLoop() {
  close(wake_fd_);
  close(epoll_fd_);
}

void EventLoop::Post(Task task) {
  bool wake;
  {
    absl::MutexLock lock(&mu_);
    posted_.push_back(std::move(task));
    wake = !wake_pending_;
    wake_pending_ = true;
  }
  if (wake) Wakeup();
}

void EventLoop::Wakeup() {
  const uint64_t one = 1;
  // Fails only when the counter is saturated: it is readable already.
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
}

bool EventLoop::has_posted() const {
  absl::MutexLock lock(&mu_);
  return !posted_.empty();
}

void EventLoop::AssertOnLoopThread() const {
#if !defined(NDEBUG) || defined(VIN_CHECK_LOOP_THREAD)
  if (thread_ != std::thread::id() && thread_ != std::this_thread::get_id()) {
    std::fprintf(stderr, "loop-only state touched off the loop's thread\n");
    std::abort();
  }
#endif
}

absl::Status EventLoop::Watch(int fd, uint32_t events, IoHandler handler) {
  AssertOnLoopThread();
  auto [it, added] = watches_.try_emplace(fd);
  it->second.generation = next_generation_++;
  it->second.handler = std::move(handler);
  epoll_event ev{};
  ev.events = EpollEventsOf(events);
  ev.data.u64 = Pack(fd, it->second.generation);
  if (epoll_ctl(epoll_fd_, added ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &ev) !=
      0) {
    const int err = errno;
    watches_.erase(it);
    return absl::InternalError(
        absl::StrCat("epoll_ctl(", fd, "): ", std::strerror(err)));
  }
  return absl::OkStatus();
}

void EventLoop::Unwatch(int fd) {
  AssertOnLoopThread();
  if (watches_.erase(fd) == 0) return;
  // The descriptor may be closed already (its owner closes it first);
  // epoll then forgot it by itself.
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
}

// How long the turn may wait: not past `max_wait` or the next timer, and not
// at all when a task is posted already.
absl::Duration EventLoop::WaitFor(absl::Duration max_wait) {
  if (has_posted()) return absl::ZeroDuration();
  const absl::Time now = clock_->Now();
  absl::Duration wait = max_wait;
  for (retry::Scheduler* s : {&scheduler_, &io_timers_}) {
    if (auto next = s->NextWakeup()) wait = std::min(wait, *next - now);
  }
  return std::max(wait, absl::ZeroDuration());
}

void EventLoop::RunOnce(absl::Duration max_wait) {
  if (thread_ == std::thread::id()) thread_ = std::this_thread::get_id();
  AssertOnLoopThread();
  const absl::Duration wait = WaitFor(max_wait);
  // Rounded up to whole milliseconds: a timer is never run early.
  const int wait_ms = static_cast<int>(std::clamp<int64_t>(
      absl::ToInt64Milliseconds(absl::Ceil(wait, absl::Milliseconds(1))), 0,
      60000));
  epoll_event events[kMaxEvents];
  int ready = epoll_wait(epoll_fd_, events, kMaxEvents, wait_ms);
  if (ready < 0) ready = 0;  // EINTR: a turn without I/O
  for (int i = 0; i < ready; ++i) {
    const uint64_t data = events[i].data.u64;
    const int fd = static_cast<int>(static_cast<uint32_t>(data));
    if (fd == wake_fd_) {
      uint64_t count;
      [[maybe_unused]] ssize_t n = read(wake_fd_, &count, sizeof(count));
      continue;
    }
    auto it = watches_.find(fd);
    if (it == watches_.end() || it->second.generation != (data >> 32)) continue;
    uint32_t what = 0;
    if (events[i].events & EPOLLIN) what |= kReadable;
    if (events[i].events & EPOLLOUT) what |= kWritable;
    if (events[i].events & (EPOLLERR | EPOLLHUP)) what |= kError;
    IoHandler handler = it->second.handler;  // it may unwatch itself
    handler(what);
  }
  RunPosted();
  io_timers_.RunDue();
  scheduler_.RunDue();
}

void EventLoop::RunPosted() {
  std::vector<Task> tasks;
  {
    absl::MutexLock lock(&mu_);
    tasks.swap(posted_);
    wake_pending_ = false;  // the next Post writes the eventfd again
  }
  for (Task& task : tasks) task();
}

}  // namespace loop
