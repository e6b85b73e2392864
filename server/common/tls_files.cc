#include "server/common/tls_files.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <ctime>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "util/read_file.h"

namespace server {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using Cert = std::unique_ptr<X509, X509Free>;
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;

Bio BioOf(const std::string& pem) {
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

// Never asks for a passphrase (OpenSSL's default would prompt on the
// terminal): an encrypted key does not load.
int NoPassphrase(char*, int, int, void*) { return 0; }

// The certificates of `pem`, leaf first; how many in `*count`.
Cert FirstCertificate(const std::string& pem, int* count) {
  Bio bio = BioOf(pem);
  Cert first;
  *count = 0;
  while (X509* x =
             PEM_read_bio_X509(bio.get(), nullptr, NoPassphrase, nullptr)) {
    if (++*count == 1) {
      first.reset(x);
    } else {
      X509_free(x);
    }
  }
  ERR_clear_error();  // the end of the PEM text
  return first;
}

std::string SerialOf(const X509* cert) {
  BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr);
  if (bn == nullptr) return "";
  char* hex = BN_bn2hex(bn);
  std::string out = hex != nullptr ? hex : "";
  OPENSSL_free(hex);
  BN_free(bn);
  return out;
}

std::string NotAfterOf(const X509* cert) {
  std::tm tm{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert), &tm) != 1) return "";
  return absl::StrFormat("%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
                         tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                         tm.tm_sec);
}

}  // namespace

absl::Status CheckTlsOptions(const TlsOptions& tls, absl::string_view flags) {
  if (!tls.enabled()) {
    if (tls.mutual()) {
      return absl::InvalidArgumentError(
          absl::StrCat(flags, "_client_ca_file needs ", flags,
                       "_cert_file and ", flags, "_key_file"));
    }
    return absl::OkStatus();
  }
  if (tls.cert_file.empty() || tls.key_file.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flags, "_cert_file and ", flags, "_key_file go together"));
  }
  return absl::OkStatus();
}

absl::StatusOr<TlsMaterial> LoadTlsMaterial(const TlsOptions& tls,
                                            absl::string_view flags) {
  if (absl::Status s = CheckTlsOptions(tls, flags); !s.ok()) return s;
  const std::string cert_flag = absl::StrCat(flags, "_cert_file");
  const std::string key_flag = absl::StrCat(flags, "_key_file");
  const std::string ca_flag = absl::StrCat(flags, "_client_ca_file");
  TlsMaterial m;
  auto cert = util::ReadSmallFile(
      tls.cert_file, absl::StrCat("the TLS certificate (", cert_flag, ")"));
  if (!cert.ok()) return cert.status();
  m.cert_chain = *std::move(cert);
  auto key = util::ReadSmallFile(
      tls.key_file, absl::StrCat("the TLS private key (", key_flag, ")"));
  if (!key.ok()) return key.status();
  m.key = *std::move(key);

  int count = 0;
  const Cert leaf = FirstCertificate(m.cert_chain, &count);
  if (leaf == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        cert_flag, ": ", tls.cert_file, " holds no PEM certificate"));
  }
  Bio key_bio = BioOf(m.key);
  const Pkey pkey(
      PEM_read_bio_PrivateKey(key_bio.get(), nullptr, NoPassphrase, nullptr));
  ERR_clear_error();
  if (pkey == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        key_flag, ": ", tls.key_file, " holds no usable PEM private key",
        absl::StrContains(m.key, "ENCRYPTED")
            ? " (it is encrypted; the server takes an unencrypted key, "
              "readable by its user only)"
            : ""));
  }
  if (X509_check_private_key(leaf.get(), pkey.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(
        absl::StrCat(key_flag, ": the key in ", tls.key_file,
                     " is not the key of the certificate in ", tls.cert_file,
                     " (", cert_flag, ")"));
  }
  if (tls.mutual()) {
    auto ca = util::ReadSmallFile(
        tls.client_ca_file, absl::StrCat("the client CA (", ca_flag, ")"));
    if (!ca.ok()) return ca.status();
    m.client_ca = *std::move(ca);
    int cas = 0;
    if (FirstCertificate(m.client_ca, &cas) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          ca_flag, ": ", tls.client_ca_file, " holds no PEM certificate"));
    }
  }
  m.subject = CertificateSubject(leaf.get());
  m.serial = SerialOf(leaf.get());
  m.not_after = NotAfterOf(leaf.get());
  return m;
}

std::string CertificateSubject(const x509_st* cert) {
  if (cert == nullptr) return "";
  const X509_NAME* name = X509_get_subject_name(cert);
  if (name == nullptr) return "";
  Bio bio(BIO_new(BIO_s_mem()));
  X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_RFC2253);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : "";
}

}  // namespace server
