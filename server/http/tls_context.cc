#include "server/http/tls_context.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/buffer.hpp>
#include <utility>

#include "absl/strings/str_cat.h"

namespace server {
namespace http {
namespace internal {
namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;

constexpr unsigned char kSessionContext[] = "vin-http";

int NoPassphrase(char*, int, int, void*) { return 0; }

// The subjects of the CA bundle's certificates, told to clients in the
// handshake (the CAs whose certificates the server takes).
STACK_OF(X509_NAME) * CaNames(const std::string& pem) {
  STACK_OF(X509_NAME)* names = sk_X509_NAME_new_null();
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  while (X509* x = PEM_read_bio_X509(bio, nullptr, NoPassphrase, nullptr)) {
    sk_X509_NAME_push(names, X509_NAME_dup(X509_get_subject_name(x)));
    X509_free(x);
  }
  ERR_clear_error();
  BIO_free(bio);
  return names;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TlsContexts>> TlsContexts::Load(
    TlsOptions files, std::string flags) {
  auto material = LoadTlsMaterial(files, flags);
  if (!material.ok()) return material.status();
  std::unique_ptr<TlsContexts> t(
      new TlsContexts(std::move(files), std::move(flags)));
  auto context = t->Make(*material);
  if (!context.ok()) return context.status();
  absl::MutexLock lock(&t->mu_);
  t->current_ = *std::move(context);
  t->material_ = *std::move(material);
  return t;
}

std::shared_ptr<ssl::context> TlsContexts::Current() const {
  absl::MutexLock lock(&mu_);
  return current_;
}

TlsMaterial TlsContexts::certificate() const {
  absl::MutexLock lock(&mu_);
  return material_;
}

absl::StatusOr<bool> TlsContexts::Reload() {
  auto material = LoadTlsMaterial(files_, flags_);
  if (!material.ok()) return material.status();
  {
    absl::MutexLock lock(&mu_);
    if (material->SameFiles(material_)) return false;
  }
  auto context = Make(*material);
  if (!context.ok()) return context.status();
  absl::MutexLock lock(&mu_);
  current_ = *std::move(context);
  material_ = *std::move(material);
  return true;
}

absl::StatusOr<std::shared_ptr<ssl::context>> TlsContexts::Make(
    const TlsMaterial& m) const {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = ctx->native_handle();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  SSL_CTX_set_options(native, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
                                  SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_default_passwd_cb(native, NoPassphrase);
  boost::system::error_code ec;
  ctx->use_certificate_chain(net::buffer(m.cert_chain), ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat(flags_, "_cert_file: OpenSSL refused ", files_.cert_file,
                     ": ", ec.message()));
  }
  ctx->use_private_key(net::buffer(m.key), ssl::context::pem, ec);
  if (ec || SSL_CTX_check_private_key(native) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat(
        flags_, "_key_file: OpenSSL refused ", files_.key_file,
        ec ? absl::StrCat(": ", ec.message()) : " for this certificate"));
  }
  if (!m.client_ca.empty()) {
    ctx->add_certificate_authority(net::buffer(m.client_ca), ec);
    if (ec) {
      return absl::InvalidArgumentError(
          absl::StrCat(flags_, "_client_ca_file: OpenSSL refused ",
                       files_.client_ca_file, ": ", ec.message()));
    }
    SSL_CTX_set_client_CA_list(native, CaNames(m.client_ca));
    ctx->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
    // Sessions resumed under client verification need a context id.
    SSL_CTX_set_session_id_context(native, kSessionContext,
                                   sizeof(kSessionContext) - 1);
  }
  return ctx;
}

}  // namespace internal
}  // namespace http
}  // namespace server
