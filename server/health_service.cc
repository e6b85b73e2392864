#include "server/health_service.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/common/status_mapping.h"
#include "util/utf8.h"

namespace server {

using grpc::health::v1::HealthCheckResponse;

// One Watch stream: writes the status it watches whenever it changes, one
// write at a time (the latest status wins), and ends once the server stops
// serving and NOT_SERVING is written.
class HealthService::WatchCall final
    : public grpc::ServerWriteReactor<HealthCheckResponse>,
      public RegisteredCall {
 public:
  WatchCall(HealthService* health, std::string service)
      : health_(health), service_(std::move(service)) {
    health_->watchers_.Add(this);
    Update();
  }

  // Sends the current status if it differs from the last one sent.
  void Update() {
    absl::optional<grpc::Status> finish;
    {
      absl::MutexLock lock(&mu_);
      absl::optional<Status> now = health_->StatusOf(service_);
      pending_ = now.value_or(HealthCheckResponse::SERVICE_UNKNOWN);
      ending_ = !health_->serving();
      finish = AdvanceLocked();
    }
    if (finish) Finish(*finish);
  }

  void OnWriteDone(bool ok) override {
    absl::optional<grpc::Status> finish;
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      if (!ok) gone_ = true;
      finish = AdvanceLocked();
    }
    if (finish) Finish(*finish);
  }
  void OnCancel() override {
    absl::optional<grpc::Status> finish;
    {
      absl::MutexLock lock(&mu_);
      gone_ = true;
      finish = AdvanceLocked();
    }
    if (finish) Finish(*finish);
  }
  void OnDone() override {
    // gRPC orders OnCancel and the reactions before OnDone in its
    // (uninstrumented) core; the lock makes that order plain to TSan too.
    { absl::MutexLock lock(&mu_); }
    health_->watchers_.Remove(this);
    Unref();
  }

 private:
  // Starts the next write if one is due; returns the status to finish with
  // (after mu_ is released: OnDone may run inline and delete the call).
  absl::optional<grpc::Status> AdvanceLocked()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_ || writing_) return absl::nullopt;
    if (gone_) {
      finished_ = true;
      return grpc::Status::CANCELLED;
    }
    if (!sent_ || *sent_ != pending_) {
      sent_ = pending_;
      response_.set_status(pending_);
      writing_ = true;
      StartWrite(&response_);
      return absl::nullopt;
    }
    if (!ending_) return absl::nullopt;
    finished_ = true;
    return ToGrpcStatus(DetailsOf(grpc::StatusCode::UNAVAILABLE,
                                  domain::ErrorReason::kShuttingDown,
                                  "the server is shutting down"));
  }

  HealthService* const health_;
  const std::string service_;
  absl::Mutex mu_;
  HealthCheckResponse response_ ABSL_GUARDED_BY(mu_);
  Status pending_ ABSL_GUARDED_BY(mu_) = HealthCheckResponse::UNKNOWN;
  absl::optional<Status> sent_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool ending_ ABSL_GUARDED_BY(mu_) = false;
  bool gone_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

HealthService::HealthService(absl::Duration snapshot_max_age)
    : snapshot_max_age_(snapshot_max_age), ticker_([this] { Tick(); }) {}

HealthService::~HealthService() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  ticker_.join();
}

bool HealthService::serving() const {
  absl::MutexLock lock(&mu_);
  return serving_;
}

absl::optional<HealthService::Status> HealthService::StatusOf(
    const std::string& service) const {
  absl::MutexLock lock(&mu_);
  const bool up = serving_ && ready_;
  if (service.empty() || service == kService) {
    return up ? HealthCheckResponse::SERVING : HealthCheckResponse::NOT_SERVING;
  }
  if (service == kSnapshotService) {
    const bool fresh = snapshot_time_.has_value() &&
                       absl::Now() - *snapshot_time_ < snapshot_max_age_;
    return up && fresh && snapshot_parity_ ? HealthCheckResponse::SERVING
                                           : HealthCheckResponse::NOT_SERVING;
  }
  if (service == kUpstreamService) {
    return serving_ && upstream_reachable_ ? HealthCheckResponse::SERVING
                                           : HealthCheckResponse::NOT_SERVING;
  }
  return absl::nullopt;
}

grpc::ServerUnaryReactor* HealthService::Check(
    grpc::CallbackServerContext* context,
    const grpc::health::v1::HealthCheckRequest* request,
    HealthCheckResponse* response) {
  auto* reactor = context->DefaultReactor();
  const absl::optional<Status> status = StatusOf(request->service());
  if (!status) {
    reactor->Finish(ToGrpcStatus(DetailsOf(
        grpc::StatusCode::NOT_FOUND, domain::ErrorReason::kNotFound,
        absl::StrCat("unknown service \"",
                     util::SafeText(request->service(), 128), "\""))));
    return reactor;
  }
  response->set_status(*status);
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerWriteReactor<HealthCheckResponse>* HealthService::Watch(
    grpc::CallbackServerContext*,
    const grpc::health::v1::HealthCheckRequest* request) {
  return new WatchCall(this, request->service());
}

void HealthService::SetNotServing() {
  {
    absl::MutexLock lock(&mu_);
    serving_ = false;
  }
  NotifyWatchers();
}

void HealthService::SetReady(bool ready) {
  {
    absl::MutexLock lock(&mu_);
    ready_ = ready;
  }
  NotifyWatchers();
}

void HealthService::SetSnapshot(absl::optional<absl::Time> data_time) {
  {
    absl::MutexLock lock(&mu_);
    snapshot_time_ = data_time;
    ++snapshot_changes_;
  }
  NotifyWatchers();
}

void HealthService::SetSnapshotParity(bool ok) {
  {
    absl::MutexLock lock(&mu_);
    if (snapshot_parity_ == ok) return;
    snapshot_parity_ = ok;
  }
  NotifyWatchers();
}

void HealthService::SetUpstreamReachable(bool reachable) {
  {
    absl::MutexLock lock(&mu_);
    if (upstream_reachable_ == reachable) return;
    upstream_reachable_ = reachable;
  }
  NotifyWatchers();
}

void HealthService::NotifyWatchers() {
  watchers_.ForEach([](WatchCall* w) { w->Update(); });
}

void HealthService::Tick() {
  absl::MutexLock lock(&mu_);
  while (!stop_) {
    // Wake when the snapshot's data grows stale (or hourly), to tell the
    // watchers; a reload notifies them itself, and wakes this loop to look
    // at the new snapshot's date.
    absl::Time wake = absl::Now() + absl::Hours(1);
    if (snapshot_time_) {
      const absl::Time stale = *snapshot_time_ + snapshot_max_age_;
      if (stale > absl::Now()) wake = std::min(wake, stale);
    }
    const uint64_t seen = snapshot_changes_;
    auto woken = [this, seen]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stop_ || snapshot_changes_ != seen;
    };
    if (mu_.AwaitWithDeadline(absl::Condition(&woken), wake)) continue;
    mu_.Unlock();
    NotifyWatchers();
    mu_.Lock();
  }
}

}  // namespace server
