#include "server/tls.h"

#include <grpc/grpc_security_constants.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace server {
namespace {

constexpr char kFlags[] = "--tls";
// How often gRPC's provider reads the copies in memory (cheap: a few KiB).
constexpr unsigned kPollSeconds = 1;

std::string Identity(const TlsMaterial& m) {
  std::string pem = m.key;
  if (!pem.empty() && pem.back() != '\n') pem.push_back('\n');
  return absl::StrCat(pem, m.cert_chain);
}

}  // namespace

absl::StatusOr<std::unique_ptr<GrpcTls>> GrpcTls::Create(
    const TlsOptions& tls) {
  if (absl::Status s = CheckTlsOptions(tls, kFlags); !s.ok()) return s;
  if (!tls.enabled()) return nullptr;
  auto material = LoadTlsMaterial(tls, kFlags);
  if (!material.ok()) return material.status();
  auto identity = StagedFile::Create("vin-grpc-identity", Identity(*material));
  if (!identity.ok()) return identity.status();
  std::unique_ptr<StagedFile> client_ca;
  if (tls.mutual()) {
    auto ca = StagedFile::Create("vin-grpc-client-ca", material->client_ca);
    if (!ca.ok()) return ca.status();
    client_ca = *std::move(ca);
  }
  auto provider =
      std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
          (*identity)->path(), (*identity)->path(),
          client_ca != nullptr ? client_ca->path() : "", kPollSeconds);
  grpc::experimental::TlsServerCredentialsOptions options(provider);
  options.watch_identity_key_cert_pairs();
  if (tls.mutual()) {
    options.watch_root_certs();
    options.set_cert_request_type(
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  } else {
    options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  }
  std::unique_ptr<GrpcTls> t(new GrpcTls(tls));
  t->credentials_ = grpc::experimental::TlsServerCredentials(options);
  if (t->credentials_ == nullptr) {
    return absl::InternalError("gRPC could not make TLS server credentials");
  }
  absl::MutexLock lock(&t->mu_);
  t->identity_ = *std::move(identity);
  t->client_ca_ = std::move(client_ca);
  t->current_ = *std::move(material);
  return t;
}

absl::StatusOr<bool> GrpcTls::Reload() {
  auto material = LoadTlsMaterial(files_, kFlags);
  if (!material.ok()) return material.status();
  absl::MutexLock lock(&mu_);
  if (material->SameFiles(current_)) return false;
  if (material->key != current_.key ||
      material->cert_chain != current_.cert_chain) {
    if (absl::Status s = identity_->Replace(Identity(*material)); !s.ok()) {
      return s;
    }
  }
  if (client_ca_ != nullptr && material->client_ca != current_.client_ca) {
    if (absl::Status s = client_ca_->Replace(material->client_ca); !s.ok()) {
      return s;
    }
  }
  current_ = *std::move(material);
  return true;
}

TlsMaterial GrpcTls::certificate() const {
  absl::MutexLock lock(&mu_);
  return current_;
}

}  // namespace server
