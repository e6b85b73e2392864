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
// Thread contract: ReloadNow from any thread; the interval's reloads run on
// a thread of the reloader's own, which the destructor stops. Reloads never
// overlap.
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
#include "server/tls_files.h"

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

  // Reloads every listener now, and logs each one's outcome (unchanged
  // included).
  void ReloadNow();

 private:
  // Reloads every listener; `asked`: by ReloadNow (every outcome logged).
  void ReloadAll(bool asked) ABSL_EXCLUSIVE_LOCKS_REQUIRED(reload_mu_);
  void Run();

  const absl::Duration interval_;
  // Serialises reloads; guards what the interval logged last.
  absl::Mutex reload_mu_;
  std::vector<Listener> listeners_;
  std::vector<std::string> last_error_ ABSL_GUARDED_BY(reload_mu_);

  absl::Mutex stop_mu_;
  bool stop_ ABSL_GUARDED_BY(stop_mu_) = false;
  std::thread thread_;  // the interval's; not started for a zero interval
};

}  // namespace server

#endif  // VIN_SERVER_CERTIFICATE_RELOADER_H_
