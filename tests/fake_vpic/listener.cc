// The fake vPIC's listener (fake_vpic_impl.h): the listening socket, the
// accept loop, one thread per connection, and stopping them all.
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "fake_vpic/fake_vpic_impl.h"
#include "fake_vpic/http.h"

namespace fakevpic {

absl::Status FakeVpic::Impl::Listen() {
  if (pipe2(wake_fds_, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = absl::StrCat(options_.port);
  if (int rc = getaddrinfo(options_.host.c_str(), port.c_str(), &hints, &found);
      rc != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("resolve ", options_.host, ": ", gai_strerror(rc)));
  }
  std::string error = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    int fd =
        socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 &&
        listen(fd, SOMAXCONN) == 0) {
      listen_fd_ = fd;
      break;
    }
    error = std::strerror(errno);
    close(fd);
  }
  freeaddrinfo(found);
  if (listen_fd_ < 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on ", options_.host, ":", options_.port, ": ", error));
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.ss_family == AF_INET6
                    ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                    : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  return absl::OkStatus();
}

FakeVpic::Impl::~Impl() {
  {
    absl::MutexLock lock(&stop_mu_);
    stop_ = true;
  }
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    // Wakes every blocking recv/send; each thread closes its own socket.
    for (int fd : open_fds_) shutdown(fd, SHUT_RDWR);
  }
  if (wake_fds_[1] >= 0) {
    ssize_t ignored = write(wake_fds_[1], "x", 1);
    (void)ignored;
  }
  if (accept_thread_.joinable()) accept_thread_.join();
  for (auto& [id, thread] : conn_threads_) thread.join();
  if (listen_fd_ >= 0) close(listen_fd_);
  for (int fd : wake_fds_) {
    if (fd >= 0) close(fd);
  }
}

void FakeVpic::Impl::AcceptLoop() {
  uint64_t next_id = 0;
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fds_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (fds[1].revents != 0) return;  // stopping
    if ((fds[0].revents & POLLIN) == 0) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    std::vector<uint64_t> finished;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) {
        close(fd);
        return;
      }
      open_fds_.insert(fd);
      finished.swap(finished_);
    }
    for (uint64_t done : finished) {
      conn_threads_[done].join();
      conn_threads_.erase(done);
    }
    const uint64_t id = next_id++;
    conn_threads_[id] =
        std::thread([this, fd, id] { ServeConnection(fd, id); });
  }
}

void FakeVpic::Impl::ServeConnection(int fd, uint64_t id) {
  Connection conn(fd);
  while (true) {
    absl::Time arrival;
    bool too_large = false;
    std::optional<std::string> head = conn.ReadHead(&arrival, &too_large);
    if (!head) {
      if (too_large) conn.WriteAll(TextResponse(431, /*close=*/true));
      break;
    }
    std::optional<HttpRequest> req = ParseHead(*head);
    if (!req) {
      conn.WriteAll(TextResponse(400, /*close=*/true));
      break;
    }
    if (req->content_length > kMaxBodyBytes) {
      conn.WriteAll(TextResponse(413, /*close=*/true));
      break;
    }
    if (!conn.ReadBody(req->content_length, &req->body)) break;
    const Disposition disposition = Handle(conn, *req, arrival);
    if (disposition == Disposition::kReset) {
      linger reset{1, 0};  // close() then sends RST instead of FIN
      setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
    }
    if (disposition != Disposition::kKeepOpen) {
      absl::MutexLock lock(&mu_);
      open_fds_.erase(fd);
      close(fd);
      fd = -1;
    }
    {
      absl::MutexLock lock(&mu_);
      --active_;  // answered, or its connection ended
    }
    if (fd < 0) break;
  }
  absl::MutexLock lock(&mu_);
  if (fd >= 0) {
    open_fds_.erase(fd);
    close(fd);
  }
  finished_.push_back(id);
}

}  // namespace fakevpic
