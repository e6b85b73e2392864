// A redis-server of the test's own on a free loopback port, with nothing
// written to disk (--save '' --appendonly no); stopped by pid. It can be
// stopped and started again on the same port, as a Redis restart, paused
// and resumed; and configured with ACL users or TLS (Debian's
// redis-server is built with TLS).
#ifndef VIN_TESTS_TESTING_REDIS_SERVER_H_
#define VIN_TESTS_TESTING_REDIS_SERVER_H_

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "testing/subprocess.h"

namespace testing_util {

// A loopback port nobody listens on now.
inline int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof(a);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  close(fd);
  return port;
}

class RedisServer {
 public:
  // `port` 0: a free one, chosen by the first Start().
  explicit RedisServer(int port = 0) : port_(port) {}

  // Before Start: more arguments of redis-server (ACL users: "--user",
  // "name", "on", ">password", ...), and whether it listens with TLS only
  // (then `extra` gives --tls-cert-file and the rest; the port is
  // --tls-port, and --port is 0).
  void Configure(std::vector<std::string> extra, bool tls = false) {
    extra_ = std::move(extra);
    tls_ = tls;
  }

  // Starts on a free port; false (with `error`) when it cannot.
  bool Start(std::string* error) {
    if (port_ == 0) port_ = FreePort();
    proc_ = std::make_unique<Subprocess>();
    std::vector<std::string> argv = {"/usr/bin/redis-server",
                                     tls_ ? "--tls-port" : "--port",
                                     absl::StrCat(port_),
                                     "--bind",
                                     "127.0.0.1",
                                     "--save",
                                     "",
                                     "--appendonly",
                                     "no",
                                     "--protected-mode",
                                     "no"};
    if (tls_) argv.insert(argv.end(), {"--port", "0"});
    argv.insert(argv.end(), extra_.begin(), extra_.end());
    if (!proc_->Start(argv)) {
      *error = "cannot start /usr/bin/redis-server (apt install redis-server)";
      return false;
    }
    if (!proc_->WaitForLine("Ready to accept connections", absl::Seconds(20))) {
      *error = "redis-server did not start:\n";
      for (const auto& l : proc_->lines()) absl::StrAppend(error, l, "\n");
      return false;
    }
    return true;
  }
  // Stops it (SIGTERM, then its exit) and returns whether it exited.
  bool Stop() {
    if (proc_ == nullptr) return true;
    proc_->Signal(SIGCONT);  // a paused one too
    proc_->Signal(SIGTERM);
    const bool ok = proc_->Wait(absl::Seconds(20)).has_value();
    proc_.reset();
    return ok;
  }
  // SIGSTOP / SIGCONT: while paused, the kernel still accepts connections
  // on its port but Redis answers nothing (a Redis that hangs).
  void Pause() {
    if (proc_ != nullptr) proc_->Signal(SIGSTOP);
  }
  void Resume() {
    if (proc_ != nullptr) proc_->Signal(SIGCONT);
  }
  ~RedisServer() { Stop(); }

  int port() const { return port_; }
  std::string url() const {
    return absl::StrCat(tls_ ? "rediss" : "redis", "://127.0.0.1:", port_);
  }

 private:
  int port_ = 0;
  std::vector<std::string> extra_;
  bool tls_ = false;
  std::unique_ptr<Subprocess> proc_;
};

}  // namespace testing_util

#endif  // VIN_TESTS_TESTING_REDIS_SERVER_H_
