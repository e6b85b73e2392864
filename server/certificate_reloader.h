// Reloads the TLS certificates of the server's listeners (the gRPC port,
// the HTTP gateway, the metrics port) without a restart or a dropped
// connection (README "TLS", DESIGN rule 19): every `interval` (zero: only
// when asked) and on ReloadNow (main calls it on SIGHUP). Each listener
// reads and checks its files itself; new connections get a new
// certificate, open ones keep theirs. The outcome is logged: a certificate
// taken (its subject, serial and expiry), or files that did not load, the
// listener keeping its current certificate (on the interval, an error is
// logged when it first appears or changes, not on every retry).
//
// Thread contract: ReloadNow from any thread, returning at once (main's
// signal thread must never wait for a file); every reload runs on a thread
// of the reloader's own, which the destructor stops. Reloads never overlap;
// requests made during one are folded into one more.
#ifndef VIN_SERVER_CERTIFICATE_RELOADER_H_
#define VIN_SERVER_CERTIFICATE_RELOADER_H_

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/common/tls_files.h"

namespace server {

class CertificateReloader {
 public:
  struct Listener {
    std::string name;  // "grpc", "http", "metrics": the log's `listener`
    // Reads the files again: true when a new certificate was taken, false
    // when they are unchanged; an error when they do not load.
    std::function<absl::StatusOr<bool>()> reload;
    std::function<TlsMaterial()> certificate;  // the one in use
  };

  CertificateReloader(absl::Duration interval, std::vector<Listener> listeners);
  ~CertificateReloader();

  // Asks for a reload of every listener, which logs each one's outcome
  // (unchanged included); returns without waiting for it.
  void ReloadNow();

 private:
  // Reloads every listener; `asked`: by ReloadNow (every outcome logged).
  void ReloadAll(bool asked);
  void Run();

  const absl::Duration interval_;  // zero: only when asked
  const std::vector<Listener> listeners_;
  // What the interval logged last, per listener: the thread's own.
  std::vector<std::string> last_error_;

  absl::Mutex mu_;
  bool asked_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // not started without listeners
};

}  // namespace server

#endif  // VIN_SERVER_CERTIFICATE_RELOADER_H_
