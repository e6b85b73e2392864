// grpc.health.v1.Health, Check and Watch:
//  - "" and "vin.v1.VinDecoderService": SERVING until the server starts
//    shutting down, NOT_SERVING after; also NOT_SERVING while not ready
//    (SetReady(false): a replica joining its fleet, DESIGN rule 16);
//  - "vin.v1.VinDecoderService.snapshot": SERVING while an offline snapshot
//    is loaded whose data is younger than the maximum age and whose parity
//    with vPIC's live answers is good enough (DESIGN rule 21), NOT_SERVING
//    otherwise (none loaded, stale, or disagreeing);
//  - "vin.v1.VinDecoderService.upstream": SERVING while vPIC can be asked,
//    NOT_SERVING while the circuit breaker in front of it is open or half
//    open (DESIGN rule 13; the service itself still answers then);
//  - other names: NOT_FOUND (Check) / SERVICE_UNKNOWN (Watch).
// Watch streams the status when it changes (a reload, the data growing
// stale, shutdown); at shutdown each Watch stream gets NOT_SERVING and then
// ends with UNAVAILABLE, so that it does not hold the process.
//
// Generated from the standard proto so that reflection describes it to
// grpcurl / buf curl. Thread-safe.
#ifndef VIN_SERVER_HEALTH_SERVICE_H_
#define VIN_SERVER_HEALTH_SERVICE_H_

#include <cstdint>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "server/call_registry.h"

namespace server {

class HealthService final : public grpc::health::v1::Health::CallbackService {
 public:
  static constexpr char kService[] = "vin.v1.VinDecoderService";
  static constexpr char kSnapshotService[] = "vin.v1.VinDecoderService.snapshot";
  static constexpr char kUpstreamService[] = "vin.v1.VinDecoderService.upstream";
  using Status = grpc::health::v1::HealthCheckResponse::ServingStatus;

  explicit HealthService(absl::Duration snapshot_max_age = absl::Hours(24 * 62));
  ~HealthService() override;

  grpc::ServerUnaryReactor* Check(
      grpc::CallbackServerContext* context,
      const grpc::health::v1::HealthCheckRequest* request,
      grpc::health::v1::HealthCheckResponse* response) override;
  grpc::ServerWriteReactor<grpc::health::v1::HealthCheckResponse>* Watch(
      grpc::CallbackServerContext* context,
      const grpc::health::v1::HealthCheckRequest* request) override;

  // Every known service reports NOT_SERVING from now on; Watch streams are
  // told and end.
  void SetNotServing();
  // Not ready: every known service reports NOT_SERVING, but Watch streams
  // stay open and are told when it becomes ready (rule 16). Ready from the
  // start unless told otherwise.
  void SetReady(bool ready);
  // The snapshot now loaded (nullopt: none), by the date of its data.
  void SetSnapshot(absl::optional<absl::Time> data_time);
  // Whether the snapshot agrees with vPIC enough (rule 21's parity, over
  // --parity_window); watchers are told.
  void SetSnapshotParity(bool ok);
  // Whether vPIC may be asked (the breaker closed); watchers are told.
  void SetUpstreamReachable(bool reachable);

  // The status of `service` now; nullopt for an unknown name.
  absl::optional<Status> StatusOf(const std::string& service) const;
  bool serving() const;

 private:
  class WatchCall;
  void NotifyWatchers();
  void Tick();  // wakes watchers when the snapshot's data grows stale

  const absl::Duration snapshot_max_age_;
  mutable absl::Mutex mu_;
  bool serving_ ABSL_GUARDED_BY(mu_) = true;
  bool ready_ ABSL_GUARDED_BY(mu_) = true;
  absl::optional<absl::Time> snapshot_time_ ABSL_GUARDED_BY(mu_);
  bool upstream_reachable_ ABSL_GUARDED_BY(mu_) = true;
  bool snapshot_parity_ ABSL_GUARDED_BY(mu_) = true;
  uint64_t snapshot_changes_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  CallRegistry<WatchCall> watchers_;
  std::thread ticker_;
};

}  // namespace server

#endif  // VIN_SERVER_HEALTH_SERVICE_H_
