#include "fleet/redis_stream.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace fleet {
namespace {

std::string Errno(int err) { return std::strerror(err); }

bool WouldBlock(int err) {
  return err == EAGAIN || err == EWOULDBLOCK || err == EINTR;
}

}  // namespace

absl::StatusOr<std::unique_ptr<RedisStream>> RedisStream::Open(
    const std::string& host, int port, const RedisTls* tls) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = absl::StrCat(port);
  if (const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
      rc != 0) {
    return absl::NotFoundError(absl::StrCat("cannot resolve the redis host \"",
                                            host, "\": ", gai_strerror(rc)));
  }
  std::unique_ptr<RedisStream> s(new RedisStream(host, port, tls));
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (a->ai_addrlen > sizeof(sockaddr_storage)) continue;
    Address address{};
    memcpy(&address.addr, a->ai_addr, a->ai_addrlen);
    address.len = a->ai_addrlen;
    s->addresses_.push_back(address);
  }
  freeaddrinfo(found);
  std::reverse(s->addresses_.begin(), s->addresses_.end());  // next at back
  if (absl::Status st = s->ConnectNext(); !st.ok()) return st;
  return s;
}

absl::Status RedisStream::ConnectNext() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  while (!addresses_.empty()) {
    const Address a = addresses_.back();
    addresses_.pop_back();
    const int fd =
        socket(a.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      last_error_ = Errno(errno);
      continue;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    if (connect(fd, reinterpret_cast<const sockaddr*>(&a.addr), a.len) != 0 &&
        errno != EINPROGRESS) {
      last_error_ = Errno(errno);
      close(fd);
      continue;
    }
    fd_ = fd;
    wants_ = kWrite;  // writable once connected (or refused)
    return absl::OkStatus();
  }
  return absl::UnavailableError(absl::StrCat(
      "cannot connect to redis at ", host_, ":", port_, ": ",
      last_error_.empty() ? std::string("no address") : last_error_));
}

RedisStream::~RedisStream() {
  if (ssl_ != nullptr) SSL_free(ssl_);
  if (fd_ >= 0) close(fd_);
}

absl::Status RedisStream::TlsWait(int ret, absl::string_view doing) {
  const int err = SSL_get_error(ssl_, ret);
  switch (err) {
    case SSL_ERROR_WANT_READ:
      wants_ = kRead;
      return absl::OkStatus();
    case SSL_ERROR_WANT_WRITE:
      wants_ = kWrite;
      return absl::OkStatus();
    case SSL_ERROR_ZERO_RETURN:
      return absl::UnavailableError("redis closed the TLS connection");
    case SSL_ERROR_SYSCALL: {
      const int e = errno;
      ERR_clear_error();
      return absl::UnavailableError(absl::StrCat(
          "redis closed the connection during ", doing,
          e != 0 ? absl::StrCat(" (", Errno(e), ")") : std::string()));
    }
    default:
      break;
  }
  const long verify = SSL_get_verify_result(ssl_);
  if (!established_ && verify != X509_V_OK) {
    ERR_clear_error();
    return absl::FailedPreconditionError(absl::StrCat(
        "the TLS handshake with redis at ", host_, " failed: its certificate ",
        "does not verify (", X509_verify_cert_error_string(verify),
        "); check --redis_tls_ca_file and the host in --redis_url"));
  }
  const std::string detail = TlsErrors();
  if (!established_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the TLS handshake with redis at ", host_, " failed: ", detail));
  }
  // Past the handshake, TLS errors are a broken connection, made again.
  return absl::UnavailableError(
      absl::StrCat("TLS ", doing, " failed: ", detail));
}

absl::StatusOr<RedisStream::Progress> RedisStream::Connect() {
  if (established_) return Progress::kEstablished;
  if (!tcp_connected_) {
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err == EINPROGRESS || err == EALREADY) return Progress::kPending;
    if (err != 0) {
      last_error_ = Errno(err);
      if (addresses_.empty()) {
        return absl::UnavailableError(
            absl::StrCat("cannot connect to redis at ", host_, ":", port_, ": ",
                         last_error_));
      }
      return Progress::kRefused;
    }
    tcp_connected_ = true;
    if (tls_ == nullptr) {
      established_ = true;
      wants_ = 0;
      return Progress::kEstablished;
    }
    auto ssl = tls_->NewSession(fd_, host_);
    if (!ssl.ok()) return ssl.status();
    ssl_ = *ssl;
  }
  ERR_clear_error();
  const int ret = SSL_do_handshake(ssl_);
  if (ret == 1) {
    established_ = true;
    wants_ = 0;
    return Progress::kEstablished;
  }
  if (absl::Status s = TlsWait(ret, "the TLS handshake"); !s.ok()) return s;
  return Progress::kPending;
}

absl::StatusOr<size_t> RedisStream::Read(std::string* out, size_t max) {
  wants_ &= ~kWrite;
  char buf[16384];
  size_t total = 0;
  while (total < max) {
    const size_t want = std::min(sizeof(buf), max - total);
    if (ssl_ == nullptr) {
      const ssize_t n = recv(fd_, buf, want, 0);
      if (n > 0) {
        out->append(buf, static_cast<size_t>(n));
        total += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && WouldBlock(errno)) return total;
      // What came before the end (or an error) is handed out first; the
      // next read meets it again.
      if (total > 0) return total;
      if (n == 0) return absl::UnavailableError("redis closed the connection");
      return absl::UnavailableError(
          absl::StrCat("reading from redis failed: ", Errno(errno)));
    }
    ERR_clear_error();
    size_t n = 0;
    const int ret = SSL_read_ex(ssl_, buf, want, &n);
    if (ret == 1) {
      out->append(buf, n);
      total += n;
      continue;
    }
    if (absl::Status s = TlsWait(ret, "read"); !s.ok() && total == 0) return s;
    return total;
  }
  return total;
}

absl::StatusOr<size_t> RedisStream::Write(absl::string_view data) {
  if (data.empty()) return size_t{0};
  if (ssl_ == nullptr) {
    const ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n >= 0) return static_cast<size_t>(n);
    if (WouldBlock(errno)) return size_t{0};
    return absl::UnavailableError(
        absl::StrCat("writing to redis failed: ", Errno(errno)));
  }
  // A write TLS could not finish is repeated with the same length.
  const size_t len = retry_write_ > 0 ? std::min(retry_write_, data.size())
                                      : std::min<size_t>(data.size(), 1 << 20);
  ERR_clear_error();
  size_t n = 0;
  const int ret = SSL_write_ex(ssl_, data.data(), len, &n);
  if (ret == 1) {
    retry_write_ = 0;
    wants_ &= ~kWrite;
    return n;
  }
  retry_write_ = len;
  if (absl::Status s = TlsWait(ret, "write"); !s.ok()) return s;
  return size_t{0};
}

}  // namespace fleet
