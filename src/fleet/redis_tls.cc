#include "fleet/redis_tls.h"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "util/read_file.h"

namespace fleet {
namespace {

// The socket's BIO: OpenSSL's own writes with write(2), which raises
// SIGPIPE on a socket the peer closed; a library must not kill a process
// that did not ignore it, so this one sends with MSG_NOSIGNAL.
int Fd(BIO* b) {
  return static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(b)));
}

int SocketWrite(BIO* b, const char* data, size_t len, size_t* written) {
  BIO_clear_retry_flags(b);
  const ssize_t n = send(Fd(b), data, len, MSG_NOSIGNAL);
  if (n >= 0) {
    *written = static_cast<size_t>(n);
    return 1;
  }
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
    BIO_set_retry_write(b);
  }
  return 0;
}

int SocketRead(BIO* b, char* data, size_t len, size_t* read_bytes) {
  BIO_clear_retry_flags(b);
  const ssize_t n = recv(Fd(b), data, len, 0);
  if (n > 0) {
    *read_bytes = static_cast<size_t>(n);
    return 1;
  }
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    BIO_set_retry_read(b);
  }
  return 0;  // end of stream, or an error (errno says which)
}

long SocketCtrl(BIO*, int cmd, long, void*) {
  return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

int SocketCreate(BIO* b) {
  BIO_set_init(b, 1);
  return 1;
}

BIO_METHOD* SocketMethod() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK,
                                 "vin redis socket");
    BIO_meth_set_write_ex(m, SocketWrite);
    BIO_meth_set_read_ex(m, SocketRead);
    BIO_meth_set_ctrl(m, SocketCtrl);
    BIO_meth_set_create(m, SocketCreate);
    return m;
  }();
  return method;
}

bool IsIpAddress(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 ||
         inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

}  // namespace

std::string TlsErrors(const std::string& none) {
  std::vector<std::string> errors;
  while (const unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    errors.emplace_back(buf);
  }
  return errors.empty() ? none : absl::StrJoin(errors, "; ");
}

namespace {

using BioPtr = std::unique_ptr<BIO, decltype(&BIO_free)>;
BioPtr MemoryBio(const std::string& pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())),
                &BIO_free);
}

// Every certificate of `pem` as a CA to verify Redis with; false when
// there is none or one does not parse.
bool AddCaCertificates(SSL_CTX* ctx, const std::string& pem) {
  BioPtr bio = MemoryBio(pem);
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  int added = 0;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    const bool ok = X509_STORE_add_cert(store, cert) == 1;
    X509_free(cert);
    if (!ok) return false;
    ++added;
  }
  // The loop ends at the end of the PEM (expected) or at a bad block.
  const unsigned long last = ERR_peek_last_error();
  if (added > 0 && ERR_GET_REASON(last) == PEM_R_NO_START_LINE) {
    ERR_clear_error();
  }
  return added > 0 && ERR_peek_error() == 0;
}

// The leaf, then the rest of the chain, as SSL_CTX_use_certificate_chain_file.
bool UseCertificateChain(SSL_CTX* ctx, const std::string& pem) {
  BioPtr bio = MemoryBio(pem);
  X509* leaf = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr);
  if (leaf == nullptr) return false;
  const bool used = SSL_CTX_use_certificate(ctx, leaf) == 1;
  X509_free(leaf);
  if (!used) return false;
  while (X509* ca = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    if (SSL_CTX_add0_chain_cert(ctx, ca) != 1) {  // takes `ca` when it works
      X509_free(ca);
      return false;
    }
  }
  if (ERR_GET_REASON(ERR_peek_last_error()) == PEM_R_NO_START_LINE) {
    ERR_clear_error();
  }
  return ERR_peek_error() == 0;
}

bool UsePrivateKey(SSL_CTX* ctx, const std::string& pem) {
  BioPtr bio = MemoryBio(pem);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr);
  if (key == nullptr) return false;
  const bool used = SSL_CTX_use_PrivateKey(ctx, key) == 1;
  EVP_PKEY_free(key);
  return used;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const RedisTls>> RedisTls::Create(
    const RedisTlsOptions& o) {
  if (o.cert_file.empty() != o.key_file.empty()) {
    return absl::InvalidArgumentError(
        "--redis_tls_cert_file and --redis_tls_key_file go together");
  }
  // Each file read once, as any input (a regular file of at most 1 MiB: a
  // FIFO would hang the start, a device never end); OpenSSL parses the
  // bytes read, never the path again.
  std::string pem[3];
  const std::pair<const std::string*, const char*> files[3] = {
      {&o.ca_file, "--redis_tls_ca_file"},
      {&o.cert_file, "--redis_tls_cert_file"},
      {&o.key_file, "--redis_tls_key_file"}};
  for (int i = 0; i < 3; ++i) {
    if (files[i].first->empty()) continue;
    auto read = util::ReadSmallFile(*files[i].first, files[i].second);
    if (!read.ok()) return absl::InvalidArgumentError(read.status().message());
    pem[i] = *std::move(read);
  }
  const std::string &ca_pem = pem[0], &cert_pem = pem[1], &key_pem = pem[2];
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot make a TLS context for redis: ", TlsErrors()));
  }
  std::shared_ptr<const RedisTls> tls(new RedisTls(ctx));
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  SSL_CTX_set_mode(
      ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (!o.ca_file.empty()) {
    if (!AddCaCertificates(ctx, ca_pem)) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot use --redis_tls_ca_file ", o.ca_file,
                       " as PEM certificates: ", TlsErrors()));
    }
  } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot load the system's CA certificates to verify redis (give "
        "--redis_tls_ca_file): ",
        TlsErrors()));
  }
  if (!o.cert_file.empty()) {
    if (!UseCertificateChain(ctx, cert_pem)) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot use --redis_tls_cert_file ", o.cert_file,
                       " as a PEM certificate chain: ", TlsErrors()));
    }
    if (!UsePrivateKey(ctx, key_pem)) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot use --redis_tls_key_file ", o.key_file,
                       " as a PEM private key: ", TlsErrors()));
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--redis_tls_key_file ", o.key_file, " is not the key of ",
          "--redis_tls_cert_file ", o.cert_file, ": ", TlsErrors()));
    }
  }
  return tls;
}

RedisTls::~RedisTls() { SSL_CTX_free(ctx_); }

absl::StatusOr<SSL*> RedisTls::NewSession(int fd,
                                          const std::string& host) const {
  ERR_clear_error();
  SSL* ssl = SSL_new(ctx_);
  BIO* bio = ssl == nullptr ? nullptr : BIO_new(SocketMethod());
  if (bio == nullptr) {
    SSL_free(ssl);
    return absl::InternalError(
        absl::StrCat("cannot start a TLS session: ", TlsErrors()));
  }
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<intptr_t>(fd)));
  SSL_set_bio(ssl, bio, bio);
  SSL_set_connect_state(ssl);
  bool named = false;
  if (IsIpAddress(host)) {
    named =
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str()) == 1;
  } else {
    SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    named = SSL_set1_host(ssl, host.c_str()) == 1 &&
            SSL_set_tlsext_host_name(ssl, host.c_str()) == 1;
  }
  if (!named) {
    SSL_free(ssl);
    return absl::InvalidArgumentError(
        absl::StrCat("cannot check redis's certificate against \"", host,
                     "\": ", TlsErrors()));
  }
  return ssl;
}

}  // namespace fleet
