// A gateway listener's TLS (DESIGN rule 19, README "TLS"): the OpenSSL
// context made from its checked files (LoadTlsMaterial) — TLS 1.2 and
// later, no renegotiation, no compression; with a client CA, a client
// certificate it signed is required and verified (the handshake fails
// without one). A reload makes a whole new context and swaps it in: a
// connection keeps the context it was accepted with, so open connections
// go on with the old certificate and new ones get the new. Files that do
// not load, or a context that cannot be made from them, leave the current
// context in place. Private to server/http/.
//
// Thread contract: any thread (the acceptor takes Current, a reload
// swaps); immutable contexts are shared, never changed.
#ifndef VIN_SERVER_HTTP_TLS_CONTEXT_H_
#define VIN_SERVER_HTTP_TLS_CONTEXT_H_

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/common/tls_files.h"

namespace server {
namespace http {
namespace internal {

class TlsContexts {
 public:
  // `flags`: the prefix naming the files in errors ("--http_tls").
  static absl::StatusOr<std::unique_ptr<TlsContexts>> Load(TlsOptions files,
                                                           std::string flags);

  // The context for a connection accepted now.
  std::shared_ptr<boost::asio::ssl::context> Current() const;

  // Reads the files again: true when they changed and a new context was
  // made from them, false when unchanged; an error keeps the current one.
  absl::StatusOr<bool> Reload();

  // The files in use.
  TlsMaterial certificate() const;

 private:
  TlsContexts(TlsOptions files, std::string flags)
      : files_(std::move(files)), flags_(std::move(flags)) {}
  // A new context from checked files.
  absl::StatusOr<std::shared_ptr<boost::asio::ssl::context>> Make(
      const TlsMaterial& m) const;

  const TlsOptions files_;
  const std::string flags_;
  // Guards the context in use and the files it was made from.
  mutable absl::Mutex mu_;
  std::shared_ptr<boost::asio::ssl::context> current_ ABSL_GUARDED_BY(mu_);
  TlsMaterial material_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal
}  // namespace http
}  // namespace server

#endif  // VIN_SERVER_HTTP_TLS_CONTEXT_H_
