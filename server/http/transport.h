// One gateway connection's byte stream (connection.h): plain TCP, or TLS over
// that TCP stream when the listener serves TLS (--http_tls_cert_file,
// --metrics_tls_cert_file), decided per connection when it is accepted.
// Beast's algorithms take it as an AsyncReadStream / AsyncWriteStream;
// the TCP stream underneath keeps the timeouts (expires_after) and the
// socket (cancel, shutdown, close) for both kinds, so the connection's timers
// and closes are the same code either way. Private to server/http/.
//
// Not thread-safe: used on its connection's strand only. It must not move
// (the TLS stream refers to the TCP stream).
#ifndef VIN_SERVER_HTTP_TRANSPORT_H_
#define VIN_SERVER_HTTP_TRANSPORT_H_

#include <openssl/ssl.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/optional.hpp>
#include <memory>
#include <string>
#include <utility>

#include "server/common/tls_files.h"

namespace server {
namespace http {
namespace internal {

class Transport {
 public:
  using executor_type = boost::beast::tcp_stream::executor_type;

  // TLS when `tls` is set (the listener's context when the connection was
  // accepted: it stays this connection's after a reload).
  Transport(boost::asio::ip::tcp::socket socket,
            std::shared_ptr<boost::asio::ssl::context> tls)
      : context_(std::move(tls)), tcp_(std::move(socket)) {
    if (context_ != nullptr) tls_.emplace(tcp_, *context_);
  }
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  executor_type get_executor() { return tcp_.get_executor(); }
  boost::beast::tcp_stream& tcp() { return tcp_; }
  boost::asio::ip::tcp::socket& socket() { return tcp_.socket(); }
  bool tls() const { return tls_.has_value(); }

  template <class MutableBuffers, class Handler>
  void async_read_some(const MutableBuffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->async_read_some(buffers, std::forward<Handler>(handler));
    } else {
      tcp_.async_read_some(buffers, std::forward<Handler>(handler));
    }
  }

  template <class ConstBuffers, class Handler>
  void async_write_some(const ConstBuffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->async_write_some(buffers, std::forward<Handler>(handler));
    } else {
      tcp_.async_write_some(buffers, std::forward<Handler>(handler));
    }
  }

  // TLS only: the server's side of the handshake, and of its close
  // (close_notify, then the client's).
  template <class Handler>
  void async_handshake(Handler&& handler) {
    tls_->async_handshake(boost::asio::ssl::stream_base::server,
                          std::forward<Handler>(handler));
  }
  template <class Handler>
  void async_shutdown(Handler&& handler) {
    tls_->async_shutdown(std::forward<Handler>(handler));
  }

  // The subject of the certificate the client presented (verified by the
  // handshake), as gRPC writes it; "" when none (or plain TCP).
  std::string PeerSubject() {
    if (!tls_) return "";
    X509* cert = SSL_get1_peer_certificate(tls_->native_handle());
    if (cert == nullptr) return "";
    std::string subject = CertificateSubject(cert);
    X509_free(cert);
    return subject;
  }

 private:
  const std::shared_ptr<boost::asio::ssl::context> context_;
  boost::beast::tcp_stream tcp_;
  boost::optional<boost::beast::ssl_stream<boost::beast::tcp_stream&>> tls_;
};

}  // namespace internal
}  // namespace http
}  // namespace server

#endif  // VIN_SERVER_HTTP_TRANSPORT_H_
