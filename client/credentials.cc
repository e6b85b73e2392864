#include "client/credentials.h"

#include "util/read_file.h"

namespace vinctl {

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentialsFor(
    const TlsOptions& tls) {
  if (tls.ca_file.empty() && tls.cert_file.empty() && tls.key_file.empty()) {
    return grpc::InsecureChannelCredentials();
  }
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    return absl::InvalidArgumentError(
        "--tls_cert_file and --tls_key_file go together");
  }
  grpc::SslCredentialsOptions options;
  if (!tls.ca_file.empty()) {
    auto ca = util::ReadSmallFile(tls.ca_file,
                                  "the server's CA (--tls_ca_file)");
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *ca;
  }
  if (!tls.cert_file.empty()) {
    auto cert = util::ReadSmallFile(tls.cert_file,
                                    "the client certificate (--tls_cert_file)");
    if (!cert.ok()) return cert.status();
    auto key = util::ReadSmallFile(tls.key_file,
                                   "the client key (--tls_key_file)");
    if (!key.ok()) return key.status();
    options.pem_cert_chain = *cert;
    options.pem_private_key = *key;
  }
  return grpc::SslCredentials(options);
}

}  // namespace vinctl
