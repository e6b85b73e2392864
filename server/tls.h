// The gRPC port's transport security: plaintext, TLS, or mutual TLS
// (--tls_cert_file, --tls_key_file, --tls_client_ca_file), with
// certificates that are replaced without a restart or a dropped connection.
//
// gRPC's own FileWatcherCertificateProvider serves them (TlsServerCredentials;
// TLS 1.2 and later), but it reads copies of ours in memory (StagedFile),
// never the operator's files: gRPC 1.51 hands whatever it reads to its
// handshaker, and a key that is not the certificate's (a file half
// replaced, or a broken one) would leave the port with no handshaker at
// all. Reload reads and checks the operator's files (LoadTlsMaterial) and
// replaces the copies only with a pair that loads; the provider polls the
// copies every second, so new connections get a new pair within about a
// second of Reload taking it, and open connections keep theirs.
//
// Thread contract: Reload and certificate from any thread (serialised
// inside); the object must outlive the gRPC server that uses
// credentials().
#ifndef VIN_SERVER_TLS_H_
#define VIN_SERVER_TLS_H_

#include <grpcpp/security/server_credentials.h>

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/common/tls_files.h"
#include "server/staged_file.h"

namespace server {

class GrpcTls {
 public:
  // Plaintext (null) when `tls` names no certificate. Errors name the
  // flag (INVALID_ARGUMENT, NOT_FOUND; see LoadTlsMaterial).
  static absl::StatusOr<std::unique_ptr<GrpcTls>> Create(const TlsOptions& tls);

  std::shared_ptr<grpc::ServerCredentials> credentials() const {
    return credentials_;
  }

  // Reads the files again. True when they changed and the new pair was
  // taken, false when unchanged; an error keeps the current pair.
  absl::StatusOr<bool> Reload();

  // The pair in use.
  TlsMaterial certificate() const;

 private:
  explicit GrpcTls(TlsOptions tls) : files_(std::move(tls)) {}

  const TlsOptions files_;
  // Guards the pair in use and its copies.
  mutable absl::Mutex mu_;
  TlsMaterial current_ ABSL_GUARDED_BY(mu_);
  // The key and its chain in one file (key first: gRPC reads the key and
  // the chain from one path, so that they are replaced together), and
  // the client CA.
  std::unique_ptr<StagedFile> identity_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<StagedFile> client_ca_ ABSL_GUARDED_BY(mu_);
  // Last: released (and gRPC's provider with it, when the server has gone)
  // before the copies it reads are closed.
  std::shared_ptr<grpc::ServerCredentials> credentials_;
};

}  // namespace server

#endif  // VIN_SERVER_TLS_H_
