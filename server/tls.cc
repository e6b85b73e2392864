#include "server/tls.h"

#include <grpcpp/security/server_credentials.h>

#include "util/read_file.h"

namespace server {

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentialsFor(
    const TlsOptions& tls) {
  if (tls.cert_file.empty() && tls.key_file.empty()) {
    if (!tls.client_ca_file.empty()) {
      return absl::InvalidArgumentError(
          "--tls_client_ca_file needs --tls_cert_file and --tls_key_file");
    }
    return grpc::InsecureServerCredentials();
  }
  if (tls.cert_file.empty() || tls.key_file.empty()) {
    return absl::InvalidArgumentError(
        "--tls_cert_file and --tls_key_file go together");
  }
  auto cert = util::ReadSmallFile(tls.cert_file,
                                  "the TLS certificate (--tls_cert_file)");
  if (!cert.ok()) return cert.status();
  auto key = util::ReadSmallFile(tls.key_file,
                                 "the TLS private key (--tls_key_file)");
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back({*key, *cert});
  if (!tls.client_ca_file.empty()) {
    auto ca = util::ReadSmallFile(tls.client_ca_file,
                                  "the client CA (--tls_client_ca_file)");
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *ca;
    options.client_certificate_request =
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(options);
}

}  // namespace server
