// TLS clients for tests of the server's listeners: a handshake made in
// process with OpenSSL that reports the certificate the server presented
// (which certificate a new connection gets, after a reload), and a libcurl
// handle that keeps its connection between requests (keep-alive across a
// reload).
#ifndef VIN_TESTS_TESTING_TLS_CLIENT_H_
#define VIN_TESTS_TESTING_TLS_CLIENT_H_

#include <curl/curl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <signal.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "testing/http_client.h"

namespace testing_util {

struct Handshake {
  bool ok = false;
  std::string error;    // OpenSSL's, when !ok
  std::string peer_cn;  // the server certificate's common name
  std::string version;  // "TLSv1.3"
};

struct HandshakeOptions {
  // The protocol versions offered (0: OpenSSL's defaults); a security
  // level of 0 lets this client offer what its own defaults would not.
  int min_version = 0, max_version = 0;
  int security_level = -1;  // -1: the default
  // ALPN protocols offered ("h2" for gRPC's port), none when empty.
  std::string alpn;
};

// A TLS handshake with 127.0.0.1:`port`, verifying the server's
// certificate against `tls.ca` (and presenting tls.cert when given).
inline Handshake HandshakeWith(int port, const TlsClient& tls,
                               const HandshakeOptions& o = {}) {
  // OpenSSL writes with write(2): a server that closes first must not
  // kill the test with SIGPIPE.
  static const bool kNoSigpipe = (::signal(SIGPIPE, SIG_IGN), true);
  (void)kNoSigpipe;
  Handshake out;
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (o.security_level >= 0) SSL_CTX_set_security_level(ctx, o.security_level);
  if (o.min_version != 0) SSL_CTX_set_min_proto_version(ctx, o.min_version);
  if (o.max_version != 0) SSL_CTX_set_max_proto_version(ctx, o.max_version);
  SSL_CTX_load_verify_locations(ctx, tls.ca.c_str(), nullptr);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  if (!tls.cert.empty()) {
    SSL_CTX_use_certificate_chain_file(ctx, tls.cert.c_str());
    SSL_CTX_use_PrivateKey_file(ctx, tls.key.c_str(), SSL_FILETYPE_PEM);
  }
  if (!o.alpn.empty()) {
    std::string wire(1, static_cast<char>(o.alpn.size()));
    wire += o.alpn;
    SSL_CTX_set_alpn_protos(ctx,
                            reinterpret_cast<const unsigned char*>(wire.data()),
                            static_cast<unsigned>(wire.size()));
  }
  const int fd = ConnectFrom(port, "127.0.0.1");
  SSL* ssl = nullptr;
  if (fd < 0) {
    out.error = "connect failed";
  } else {
    ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    SSL_set_tlsext_host_name(ssl, "localhost");
    if (SSL_connect(ssl) == 1) {
      out.ok = true;
      out.version = SSL_get_version(ssl);
      if (X509* peer = SSL_get1_peer_certificate(ssl)) {
        char cn[256] = {0};
        X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName,
                                  cn, sizeof(cn));
        out.peer_cn = cn;
        X509_free(peer);
      }
    } else {
      char buf[256];
      ERR_error_string_n(ERR_get_error(), buf, sizeof(buf));
      out.error = buf;
    }
  }
  ERR_clear_error();
  if (ssl != nullptr) SSL_free(ssl);
  if (fd >= 0) ::close(fd);
  SSL_CTX_free(ctx);
  return out;
}

// Requests on one libcurl handle: one connection, kept alive between them
// (as long as the server keeps it).
class KeepAliveClient {
 public:
  KeepAliveClient(int port, TlsClient tls) : port_(port), tls_(std::move(tls)) {
    c_ = curl_easy_init();
  }
  ~KeepAliveClient() { curl_easy_cleanup(c_); }
  KeepAliveClient(const KeepAliveClient&) = delete;
  KeepAliveClient& operator=(const KeepAliveClient&) = delete;

  HttpResponse Get(const std::string& path,
                   const std::vector<std::string>& headers = {}) {
    return Perform(c_, port_, "GET", path, "", headers, absl::Seconds(30),
                   &tls_);
  }
  // New connections the last request had to open (0: it reused one).
  long connects() const {
    long n = -1;
    curl_easy_getinfo(c_, CURLINFO_NUM_CONNECTS, &n);
    return n;
  }

 private:
  const int port_;
  const TlsClient tls_;
  CURL* c_;
};

}  // namespace testing_util

#endif  // VIN_TESTS_TESTING_TLS_CLIENT_H_
