// One byte stream to Redis: a non-blocking TCP socket, with a TLS session
// over it for rediss:// (fleet/redis_tls.h). Nothing here blocks, except
// resolving a host name (getaddrinfo) when it opens; the owner watches
// fd() on its event loop for wants() and calls Connect() until it is
// established, then Read() and Write().
//
// Errors name the problem: UNAVAILABLE for what may pass (refused, reset,
// closed by Redis), FAILED_PRECONDITION for a TLS handshake that failed
// (a certificate that does not verify, or a name it does not hold).
//
// One owner, one thread.
#ifndef VIN_FLEET_REDIS_STREAM_H_
#define VIN_FLEET_REDIS_STREAM_H_

#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fleet/redis_tls.h"

namespace fleet {

class RedisStream {
 public:
  enum Wants : uint32_t { kRead = 1, kWrite = 2 };

  // Starts connecting to host:port (each of the name's addresses in turn,
  // until one accepts); `tls` (not owned, outlives the stream) null for
  // plaintext.
  static absl::StatusOr<std::unique_ptr<RedisStream>> Open(
      const std::string& host, int port, const RedisTls* tls);
  ~RedisStream();

  RedisStream(const RedisStream&) = delete;
  RedisStream& operator=(const RedisStream&) = delete;

  // The socket; another one after a refused address (Connect()).
  int fd() const { return fd_; }
  bool established() const { return established_; }
  // What the stream waits for before its next step can go on: while
  // connecting, what the connect or handshake needs; then what a read or
  // write that could not finish needs (TLS may need to write to read).
  uint32_t wants() const { return wants_; }

  enum class Progress { kPending, kEstablished, kRefused };
  // Moves the connect and the TLS handshake on. kRefused: this address
  // refused and another is left; the owner stops watching fd() and calls
  // ConnectNext(), which closes it and connects to the next on a new one.
  absl::StatusOr<Progress> Connect();
  // Starts a connect to the next address left: OK, or the last error when
  // none is left.
  absl::Status ConnectNext();
  // Appends what has arrived to `out`, at most `max` bytes: how many (0
  // when nothing has; `max` when more may be there). UNAVAILABLE when
  // Redis closed it.
  absl::StatusOr<size_t> Read(std::string* out, size_t max);
  // Writes from the start of `data`: the bytes taken (0 when the socket is
  // full). After a short TLS write, the next call must start with the same
  // bytes (they are the caller's buffer's front, not yet consumed).
  absl::StatusOr<size_t> Write(absl::string_view data);

 private:
  struct Address {
    sockaddr_storage addr;
    socklen_t len;
  };
  RedisStream(std::string host, int port, const RedisTls* tls)
      : host_(std::move(host)), port_(port), tls_(tls) {}
  // SSL_get_error's verdict on a TLS call that returned `ret`: sets wants_
  // and returns OK to wait, or the error.
  absl::Status TlsWait(int ret, absl::string_view doing);

  int fd_ = -1;
  const std::string host_;
  const int port_;
  const RedisTls* const tls_;
  std::vector<Address> addresses_;  // those not tried yet
  std::string last_error_;
  struct ssl_st* ssl_ = nullptr;
  bool tcp_connected_ = false;
  bool established_ = false;
  uint32_t wants_ = kWrite;  // a connect in progress: writable when done
  size_t retry_write_ = 0;   // the length of a TLS write to repeat
};

}  // namespace fleet

#endif  // VIN_FLEET_REDIS_STREAM_H_
