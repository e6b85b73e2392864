// A loopback HTTP server that takes requests and answers each with a fixed
// status (a webhook's receiver in tests): it keeps every request's method,
// target and body, and a test waits for them without sleeping.
#ifndef VIN_TESTS_TESTING_HTTP_RECEIVER_H_
#define VIN_TESTS_TESTING_HTTP_RECEIVER_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace testing_util {

class HttpReceiver {
 public:
  struct Request {
    std::string method, target, body;
  };

  // Listens on 127.0.0.1 (a free port), answering `status` to everything.
  explicit HttpReceiver(int status = 204) : status_(status) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    ::listen(fd_, 16);
    socklen_t len = sizeof(a);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~HttpReceiver() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }

  int port() const { return port_; }

  // Waits until at least `n` requests have come or `timeout` passes.
  std::vector<Request> WaitFor(size_t n, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return requests_.size() >= n;
    };
    mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
    return requests_;
  }

 private:
  void Serve() {
    while (!stop_) {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      Request r;
      if (Read(c, &r)) {
        const std::string answer = absl::StrCat("HTTP/1.1 ", status_,
                                                " X\r\nContent-Length: 0\r\n"
                                                "Connection: close\r\n\r\n");
        (void)!::write(c, answer.data(), answer.size());
        absl::MutexLock lock(&mu_);
        requests_.push_back(std::move(r));
      }
      ::close(c);
    }
  }

  // The head, then Content-Length bytes of body.
  static bool Read(int c, Request* r) {
    std::string data;
    char buf[4096];
    size_t head_end = std::string::npos;
    size_t length = 0;
    while (true) {
      const ssize_t n = ::read(c, buf, sizeof(buf));
      if (n <= 0) return false;
      data.append(buf, static_cast<size_t>(n));
      if (head_end == std::string::npos) {
        head_end = data.find("\r\n\r\n");
        if (head_end == std::string::npos) continue;
        const std::string head =
            absl::AsciiStrToLower(data.substr(0, head_end));
        const size_t cl = head.find("content-length:");
        if (cl != std::string::npos) {
          (void)absl::SimpleAtoi(
              head.substr(cl + 15, head.find("\r\n", cl) - cl - 15), &length);
        }
        const size_t sp1 = data.find(' ');
        const size_t sp2 = data.find(' ', sp1 + 1);
        r->method = data.substr(0, sp1);
        r->target = data.substr(sp1 + 1, sp2 - sp1 - 1);
      }
      if (data.size() >= head_end + 4 + length) {
        r->body = data.substr(head_end + 4, length);
        return true;
      }
    }
  }

  const int status_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  absl::Mutex mu_;
  std::vector<Request> requests_ ABSL_GUARDED_BY(mu_);
};

}  // namespace testing_util

#endif  // VIN_TESTS_TESTING_HTTP_RECEIVER_H_
