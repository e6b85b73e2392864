// A listener's TLS files (README "TLS", DESIGN rule 19): its certificate
// chain, its private key and, for mutual TLS, the CA bundle its clients'
// certificates must chain to. They are read and checked together (the
// chain parses, the key is the leaf's, the CA parses), so that files that
// do not make a usable pair are refused whole: at start a usage error, on
// a reload an error the caller logs while the listener keeps what it had.
// The same files and checks serve the gRPC port (--tls_*), the HTTP gateway
// (--http_tls_*) and the metrics port (--metrics_tls_*). Pure apart from
// reading the files; safe from any thread.
#ifndef VIN_SERVER_COMMON_TLS_FILES_H_
#define VIN_SERVER_COMMON_TLS_FILES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct x509_st;  // OpenSSL's X509

namespace server {

struct TlsOptions {
  std::string cert_file;  // PEM certificate chain, leaf first; "" = plaintext
  std::string key_file;   // PEM private key of cert_file (not encrypted)
  // PEM CA bundle: clients must present a certificate it signed (mTLS).
  std::string client_ca_file;

  bool enabled() const { return !cert_file.empty() || !key_file.empty(); }
  bool mutual() const { return !client_ca_file.empty(); }
};

// What the files held, checked.
struct TlsMaterial {
  std::string cert_chain;  // PEM, as read
  std::string key;         // PEM, as read
  std::string client_ca;   // PEM, as read; "" without mutual TLS
  // The leaf certificate's, for logs.
  std::string subject;    // RFC 2253, as CertificateSubject writes it
  std::string serial;     // hexadecimal
  std::string not_after;  // RFC 3339, UTC

  bool SameFiles(const TlsMaterial& o) const {
    return cert_chain == o.cert_chain && key == o.key &&
           client_ca == o.client_ca;
  }
};

// Whether the flags go together, without reading anything: the certificate
// and the key both or neither, a client CA only with them. `flags` is the
// flags' common prefix ("--tls", "--http_tls"): errors (INVALID_ARGUMENT)
// name "--http_tls_key_file" and so on.
absl::Status CheckTlsOptions(const TlsOptions& tls, absl::string_view flags);

// Reads and checks the files of `tls` (which must be enabled). Errors name
// the flag and the file: NOT_FOUND / PERMISSION_DENIED when a file cannot
// be read, INVALID_ARGUMENT when it holds no PEM certificate or key, an
// encrypted key, or a key that is not the certificate's.
absl::StatusOr<TlsMaterial> LoadTlsMaterial(const TlsOptions& tls,
                                            absl::string_view flags);

// A certificate's subject as gRPC writes it for GRPC_X509_SUBJECT_PROPERTY_NAME
// (OpenSSL's RFC 2253 form, last RDN first: "CN=web,O=Acme\, Inc.,C=US"),
// so that one client certificate names the same tenant over gRPC and HTTP.
std::string CertificateSubject(const x509_st* cert);

}  // namespace server

#endif  // VIN_SERVER_COMMON_TLS_FILES_H_
