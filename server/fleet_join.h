// DESIGN rule 16: a replica started with --redis_url joins its fleet before
// it serves. Until Redis has answered (fleet::RedisFleet::OnJoined), for at
// most --redis_connect_timeout, health reports NOT_SERVING and the calls of
// vin.v1.VinDecoderService are held, never failed: a gRPC server
// interceptor (HoldCalls) keeps each new call before its handler runs, and
// lets them all go, in arrival order, when the replica joins or the timeout
// passes. After a timeout the replica serves in local mode and says so (a
// warning naming Redis); it joins when Redis answers later (a line then).
// Health and reflection are never held.
//
// Threads: Joined() on the engine's loop; the interceptor on gRPC's
// threads; a waiter thread of its own, from construction until the gate
// opens (the timeout at most), lets the held calls go (their handlers run
// on it) and tells health; Stop() (shutdown) opens the gate at once and
// joins that thread. mu_ is a leaf: held calls go on after it is released.
#ifndef VIN_SERVER_FLEET_JOIN_H_
#define VIN_SERVER_FLEET_JOIN_H_

#include <grpcpp/support/server_interceptor.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/health_service.h"

namespace server {

class FleetJoin {
 public:
  // Marks `health` (not owned; it outlives this) not ready and starts
  // waiting, for at most `timeout` (positive), for Joined().
  FleetJoin(std::string redis_url, absl::Duration timeout,
            HealthService* health);
  ~FleetJoin();  // Stop()

  FleetJoin(const FleetJoin&) = delete;
  FleetJoin& operator=(const FleetJoin&) = delete;

  // For the gRPC server's builder: holds the decode service's calls until
  // the gate opens (after it, it adds nothing to a call).
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
  HoldCalls();

  // Redis has answered for the first time (on the engine's loop).
  void Joined();
  // The server stops: held calls go on now (and meet the drain), health is
  // left to the shutdown. Idempotent; returns once the waiter has ended.
  void Stop();

  // Whether the server should log a change of Redis's state: not while the
  // gate waits (its own line will say what happened), nor Redis coming up
  // before the first join (the join's line says it).
  bool ShouldLogRedisState(bool up) const;

  // Calls held now (tests).
  size_t held() const;

 private:
  class Interceptor;
  class Factory;

  // Keeps a call's first batch (true), or false once the gate is open.
  bool Hold(grpc::experimental::InterceptorBatchMethods* methods);
  void Wait();  // the waiter thread

  const std::string redis_url_;
  const absl::Duration timeout_;
  HealthService* const health_;
  const absl::Time started_;
  std::atomic<bool> open_fast_{false};  // open_, read without the lock

  mutable absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
  bool joined_ ABSL_GUARDED_BY(mu_) = false;
  bool timed_out_ ABSL_GUARDED_BY(mu_) = false;  // opened by the timeout
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<grpc::experimental::InterceptorBatchMethods*> held_
      ABSL_GUARDED_BY(mu_);
  std::thread waiter_;
};

}  // namespace server

#endif  // VIN_SERVER_FLEET_JOIN_H_
