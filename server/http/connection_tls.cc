// Connection's TLS (connection.h, transport.h): the handshake of a connection
// accepted on a TLS listener, within the head's time limit (a client that
// never finishes it holds a connection no longer than one that never sends
// a head); the client certificate's subject as the tenant (mutual TLS); a
// plaintext request on the TLS port told to use https; and the close of an
// answered connection with close_notify.
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <chrono>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "server/common/log.h"
#include "server/http/connection.h"
#include "server/http/http_status.h"

namespace server {
namespace http {
namespace internal {
namespace {

// How long a TLS close waits for the client's close_notify.
constexpr auto kCloseNotifyWait = std::chrono::seconds(2);

bool IsPlaintextHttp(const beast::error_code& ec) {
  return ec.category() == net::error::get_ssl_category() &&
         ERR_GET_REASON(static_cast<unsigned long>(ec.value())) ==
             SSL_R_HTTP_REQUEST;
}

}  // namespace

void Connection::Handshake() {
  if (closing_) return;
  StartTimer(options().head_timeout);
  stream_.async_handshake([self = shared_from_this()](beast::error_code ec) {
    if (self->timed_out_) ec = beast::error::timeout;
    if (ec) {
      self->CancelTimer();
      return self->HandshakeFailed(ec);
    }
    self->StopTimer();
    self->peer_subject_ = self->stream_.PeerSubject();
    self->ReadHead();
  });
}

void Connection::HandshakeFailed(beast::error_code ec) {
  if (IsPlaintextHttp(ec)) {
    // Not TLS at all: an http:// URL for an https:// port. One plaintext
    // answer, sent once without waiting, then the close.
    static const std::string* const kUseHttps = new std::string(CannedAnswer(
        "400 Bad Request",
        ErrorBody(400, domain::ErrorReason::kTlsRequired,
                  "this port serves HTTPS only: use an https:// URL")));
    (void)::send(stream_.socket().native_handle(), kUseHttps->data(),
                 kUseHttps->size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  } else if (!closing_) {
    // Scanners, clients without an accepted certificate, old protocol
    // versions: theirs to see, ours at debug level only.
    log::Event(log::Level::kDebug, "TLS handshake failed",
               {{"listener", options().name},
                {"peer", client_},
                {"error", ec == beast::error::timeout
                              ? std::string("no handshake within the head "
                                            "timeout")
                              : ec.message()}});
  }
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream_.tcp().close();
}

void Connection::CloseTls() {
  if (tls_closing_ || closing_) return;
  tls_closing_ = true;
  stream_.tcp().expires_after(kCloseNotifyWait);
  stream_.async_shutdown([self = shared_from_this()](beast::error_code) {
    beast::error_code ignored;
    self->stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    self->stream_.tcp().close();
  });
}

}  // namespace internal
}  // namespace http
}  // namespace server
