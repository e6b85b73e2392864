// A loopback TCP proxy in front of a server, for tests that need a client's
// connection to go away the way a crashed host or a broken network takes
// it: Freeze() stops carrying the server's bytes to the client (its writes
// then back up behind HTTP/2 flow control), Sever() resets every connection
// (RST to both ends), without the client saying goodbye.
//
// Thread-safe. One thread accepts; one thread per connection pumps bytes.
#ifndef VIN_TESTS_TESTING_TCP_PROXY_H_
#define VIN_TESTS_TESTING_TCP_PROXY_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace testing_util {

class TcpProxy {
 public:
  // Listens on 127.0.0.1:<free port>, forwards to 127.0.0.1:`target_port`.
  // Null when the listening socket cannot be set up.
  static std::unique_ptr<TcpProxy> Start(int target_port) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return nullptr;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        listen(fd, 16) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      close(fd);
      return nullptr;
    }
    return std::unique_ptr<TcpProxy>(
        new TcpProxy(fd, ntohs(addr.sin_port), target_port));
  }

  ~TcpProxy() {
    Sever();
    stop_.store(true);
    shutdown(listen_fd_, SHUT_RDWR);
    acceptor_.join();
    close(listen_fd_);
    for (std::thread& t : pumps_) t.join();
  }

  int port() const { return port_; }

  // Bytes from the server are no longer read or passed on; the client's
  // bytes still go through.
  void Freeze() { frozen_.store(true); }

  // Ends every connection made so far, at both ends: a FIN at once, then a
  // reset as the proxy closes its sockets (SO_LINGER 0).
  void Sever() {
    absl::MutexLock lock(&mu_);
    for (int fd : open_fds_) {
      linger l{1, 0};  // close with RST
      setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
      shutdown(fd, SHUT_RDWR);
    }
  }

  int connections() const { return connections_.load(); }

 private:
  TcpProxy(int listen_fd, int port, int target_port)
      : listen_fd_(listen_fd), port_(port), target_port_(target_port) {
    acceptor_ = std::thread([this] { Accept(); });
  }

  void Accept() {
    while (!stop_.load()) {
      const int client = accept(listen_fd_, nullptr, nullptr);
      if (client < 0) return;  // shut down
      const int server = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      addr.sin_port = htons(target_port_);
      if (server < 0 || connect(server, reinterpret_cast<sockaddr*>(&addr),
                                sizeof(addr)) != 0) {
        close(client);
        if (server >= 0) close(server);
        continue;
      }
      connections_.fetch_add(1);
      {
        absl::MutexLock lock(&mu_);
        open_fds_.push_back(client);
        open_fds_.push_back(server);
      }
      pumps_.emplace_back([this, client, server] { Pump(client, server); });
    }
  }

  // Copies bytes both ways until either side closes or the proxy severs.
  void Pump(int client, int server) {
    char buf[16384];
    bool open = true;
    while (open) {
      pollfd fds[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
      // While frozen the server's side is not read; wake up now and then
      // to see a sever.
      const bool frozen = frozen_.load();
      if (frozen) fds[1].events = 0;
      if (poll(fds, 2, frozen ? 5 : 100) < 0) break;
      for (int i = 0; i < 2 && open; ++i) {
        if (fds[i].revents == 0) continue;
        if (i == 1 && frozen && (fds[1].revents & (POLLHUP | POLLERR)) == 0) {
          continue;  // data waits in the socket while frozen
        }
        const int from = i == 0 ? client : server;
        const int to = i == 0 ? server : client;
        const ssize_t n = read(from, buf, sizeof(buf));
        if (n <= 0) {
          open = false;
          break;
        }
        for (ssize_t sent = 0; sent < n;) {
          const ssize_t w = send(to, buf + sent, n - sent, MSG_NOSIGNAL);
          if (w <= 0) {
            open = false;
            break;
          }
          sent += w;
        }
      }
    }
    absl::MutexLock lock(&mu_);
    for (int fd : {client, server}) {
      // Closed under mu_, so that Sever() never touches a reused fd.
      for (auto it = open_fds_.begin(); it != open_fds_.end(); ++it) {
        if (*it == fd) {
          open_fds_.erase(it);
          break;
        }
      }
      close(fd);
    }
  }

  const int listen_fd_;
  const int port_;
  const int target_port_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> frozen_{false};
  std::atomic<int> connections_{0};
  std::thread acceptor_;
  std::vector<std::thread> pumps_;  // acceptor thread, then the destructor
  absl::Mutex mu_;
  std::vector<int> open_fds_ ABSL_GUARDED_BY(mu_);
};

}  // namespace testing_util

#endif  // VIN_TESTS_TESTING_TCP_PROXY_H_
