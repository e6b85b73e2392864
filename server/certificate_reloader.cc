#include "server/certificate_reloader.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "server/log.h"

namespace server {

CertificateReloader::CertificateReloader(absl::Duration interval,
                                         std::vector<Listener> listeners)
    : interval_(interval),
      listeners_(std::move(listeners)),
      last_error_(listeners_.size()) {
  if (interval_ > absl::ZeroDuration() && !listeners_.empty()) {
    thread_ = std::thread([this] { Run(); });
  }
}

CertificateReloader::~CertificateReloader() {
  {
    absl::MutexLock lock(&stop_mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void CertificateReloader::ReloadNow() {
  absl::MutexLock lock(&reload_mu_);
  ReloadAll(/*asked=*/true);
}

void CertificateReloader::Run() {
  for (;;) {
    {
      absl::MutexLock lock(&stop_mu_);
      if (stop_mu_.AwaitWithTimeout(absl::Condition(&stop_), interval_)) {
        return;
      }
    }
    absl::MutexLock reload(&reload_mu_);
    ReloadAll(/*asked=*/false);
  }
}

void CertificateReloader::ReloadAll(bool asked) {
  for (size_t i = 0; i < listeners_.size(); ++i) {
    const Listener& l = listeners_[i];
    const absl::StatusOr<bool> taken = l.reload();
    if (!taken.ok()) {
      const std::string error = taken.status().ToString();
      if (asked || error != last_error_[i]) {
        log::Event(spdlog::level::err,
                   "TLS certificate reload failed; keeping the current one",
                   {{"listener", l.name}, {"error", error}});
      }
      last_error_[i] = error;
      continue;
    }
    last_error_[i].clear();
    if (!*taken && !asked) continue;
    const TlsMaterial m = l.certificate();
    log::Event(spdlog::level::info,
               *taken ? "TLS certificate reloaded: new connections get it"
                      : "TLS certificate files unchanged",
               {{"listener", l.name},
                {"subject", m.subject},
                {"serial", m.serial},
                {"not_after", m.not_after}});
  }
}

}  // namespace server
