// vinctl's transport security toward vin-server.
#ifndef VIN_CLIENT_CREDENTIALS_H_
#define VIN_CLIENT_CREDENTIALS_H_

#include <memory>
#include <string>

#include <grpcpp/security/credentials.h>

#include "absl/status/statusor.h"

namespace vinctl {

struct TlsOptions {
  // PEM CA bundle that signed the server's certificate; "" and no client
  // certificate = plaintext.
  std::string ca_file;
  std::string cert_file;  // client certificate (mTLS), with key_file
  std::string key_file;
};

// Plaintext when no TLS file is given; TLS otherwise (the system's roots
// when only a client certificate is given). Errors name the flag.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentialsFor(
    const TlsOptions& tls);

}  // namespace vinctl

#endif  // VIN_CLIENT_CREDENTIALS_H_
