// TLS toward Redis (rediss://), with OpenSSL: the settings every
// connection shares (an SSL_CTX: TLS 1.2 at least, the CAs that may sign
// Redis's certificate, the client certificate Redis may ask for with
// tls-auth-clients), and a session per connection that verifies the
// server's certificate chain and its name (a host name against the
// certificate's DNS names, with SNI; an IP address against its IP
// addresses).
//
// Immutable once made: any thread may start sessions from it.
#ifndef VIN_FLEET_REDIS_TLS_H_
#define VIN_FLEET_REDIS_TLS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

namespace fleet {

struct RedisTlsOptions {
  std::string ca_file;    // PEM CAs to trust; "" = the system's store
  std::string cert_file;  // PEM client certificate chain; "" = none
  std::string key_file;   // its PEM private key (with cert_file)
};

class RedisTls {
 public:
  // INVALID_ARGUMENT names the flag whose file cannot be used, and why.
  static absl::StatusOr<std::shared_ptr<const RedisTls>> Create(
      const RedisTlsOptions& options);
  ~RedisTls();

  RedisTls(const RedisTls&) = delete;
  RedisTls& operator=(const RedisTls&) = delete;

  // A client session over the connected (or connecting) socket `fd`,
  // verifying that the peer is `host` (the name or address as written in
  // --redis_url). The caller owns it (SSL_free).
  absl::StatusOr<SSL*> NewSession(int fd, const std::string& host) const;

 private:
  explicit RedisTls(SSL_CTX* ctx) : ctx_(ctx) {}
  SSL_CTX* const ctx_;
};

// This thread's OpenSSL errors as one line (and the queue emptied); `none`
// when there is none.
std::string TlsErrors(const std::string& none = "no detail from OpenSSL");

}  // namespace fleet

#endif  // VIN_FLEET_REDIS_TLS_H_
