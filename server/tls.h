// The server's transport security: plaintext, TLS, or mutual TLS.
#ifndef VIN_SERVER_TLS_H_
#define VIN_SERVER_TLS_H_

#include <memory>
#include <string>

#include <grpcpp/security/server_credentials.h>

#include "absl/status/statusor.h"

namespace server {

struct TlsOptions {
  std::string cert_file;  // PEM certificate chain; "" = plaintext
  std::string key_file;   // PEM private key of cert_file
  // PEM CA bundle: clients must present a certificate it signed (mTLS).
  std::string client_ca_file;
};

// Insecure credentials when no certificate is given; otherwise TLS, and
// mTLS with a client CA. Errors (INVALID_ARGUMENT, NOT_FOUND) name the flag.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentialsFor(
    const TlsOptions& tls);

}  // namespace server

#endif  // VIN_SERVER_TLS_H_
