#include "server/certificate_reloader.h"

#include <utility>

#include "server/common/log.h"

namespace server {

CertificateReloader::CertificateReloader(absl::Duration interval,
                                         std::vector<Listener> listeners)
    : interval_(interval),
      listeners_(std::move(listeners)),
      last_error_(listeners_.size()) {
  if (!listeners_.empty()) thread_ = std::thread([this] { Run(); });
}

CertificateReloader::~CertificateReloader() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void CertificateReloader::ReloadNow() {
  absl::MutexLock lock(&mu_);
  asked_ = true;
}

void CertificateReloader::Run() {
  const absl::Duration wait =
      interval_ > absl::ZeroDuration() ? interval_ : absl::InfiniteDuration();
  for (;;) {
    bool asked = false;
    {
      absl::MutexLock lock(&mu_);
      auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stop_ || asked_;
      };
      mu_.AwaitWithTimeout(absl::Condition(&woken), wait);
      if (stop_) return;
      asked = asked_;
      asked_ = false;
    }
    ReloadAll(asked);
  }
}

void CertificateReloader::ReloadAll(bool asked) {
  for (size_t i = 0; i < listeners_.size(); ++i) {
    const Listener& l = listeners_[i];
    const absl::StatusOr<bool> taken = l.reload();
    if (!taken.ok()) {
      const std::string error = taken.status().ToString();
      if (asked || error != last_error_[i]) {
        log::Event(log::Level::kError,
                   "TLS certificate reload failed; keeping the current one",
                   {{"listener", l.name}, {"error", error}});
      }
      last_error_[i] = error;
      continue;
    }
    last_error_[i].clear();
    if (!*taken && !asked) continue;
    const TlsMaterial m = l.certificate();
    log::Event(log::Level::kInfo,
               *taken ? "TLS certificate reloaded: new connections get it"
                      : "TLS certificate files unchanged",
               {{"listener", l.name},
                {"subject", m.subject},
                {"serial", m.serial},
                {"not_after", m.not_after}});
  }
}

}  // namespace server
