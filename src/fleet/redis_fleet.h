// The fleet's shared state in Redis (engine::FleetBackend): finished
// decodes under <prefix>result:<key> (with the cache TTL), flight leases
// under <prefix>lease:<key> (SET NX PX, renewed, released by a
// token-checked script), the breaker's probe under <prefix>breaker:probe
// (the same kind of lease, named after the replica), and flights' and the
// breaker's events on the channel
// <prefix>events (vin.fleet.v1.FleetEvent, fleet/event_mapping.h), which
// every replica reads and filters; an event that does not parse is
// rejected: counted, and told to the OnRejectedEvent handler.
//
// When Redis is down or slow, every call answers (in the loop's next turn)
// that it is unavailable (the engine then goes on alone); it comes back by
// itself. On the engine's loop, as engine::FleetBackend says; up(),
// errors(), commands() and events_rejected() may be read from any thread.
#ifndef VIN_FLEET_REDIS_FLEET_H_
#define VIN_FLEET_REDIS_FLEET_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "engine/fleet_backend.h"
#include "fleet/event_mapping.h"
#include "fleet/redis_client.h"

namespace fleet {

class RedisFleet final : public engine::FleetBackend {
 public:
  // `on_state`: Redis went down (false) or came back (true).
  // `fleet_size_hint`: the replicas' number, for the local bucket of the
  // fallback (--upstream_rate / hint).
  RedisFleet(RedisAddress address, std::string prefix, absl::Duration timeout,
             int fleet_size_hint, std::function<void(bool up)> on_state);

  void Attach(loop::EventLoop* loop) override { client_.Attach(loop); }
  void Detach() override { client_.Detach(); }
  void ClaimFlight(const std::string& key, const std::string& token,
                   absl::Duration lease,
                   std::function<void(Claim)> done) override;
  void RenewLease(const std::string& key, const std::string& token,
                  absl::Duration lease) override;
  void ReleaseLease(const std::string& key, const std::string& token) override;
  void StoreResult(const std::string& key, std::string cached,
                   absl::Duration ttl) override;
  void Publish(const engine::FleetEvent& event) override;
  void ClaimProbe(absl::Duration hold,
                  std::function<void(ProbeClaim)> done) override;
  void HoldProbe(absl::Duration hold) override;
  void ReleaseProbe() override;
  void OnEvent(std::function<void(engine::FleetEvent)> handler) override;
  const std::string& replica() const override { return replica_; }
  bool up() const override { return client_.up(); }
  std::unique_ptr<upstream::UpstreamBudget> MakeBudget(
      const upstream::BudgetOptions& options,
      std::function<absl::Time()> now) override;

  // Where events that do not parse are told (with why), on the loop; set
  // before OnEvent.
  void OnRejectedEvent(std::function<void(const absl::Status&)> handler) {
    on_rejected_ = std::move(handler);
  }
  // Runs `handler` once, on the loop, the first time Redis has answered and
  // confirmed the events' subscription (RedisClient::OnJoined); set before
  // Attach.
  void OnJoined(std::function<void()> handler) {
    client_.OnJoined(std::move(handler));
  }
  // Events of the channel that did not parse, since the start.
  uint64_t events_rejected() const { return events_rejected_.load(); }

  uint64_t errors() const { return client_.errors(); }
  uint64_t commands() const { return client_.commands(); }
  RedisClient& client() { return client_; }
  const std::string& prefix() const { return prefix_; }

 private:
  const std::string prefix_;
  const std::string replica_;  // random, per process
  const int fleet_size_hint_;
  std::function<void(const absl::Status&)> on_rejected_;
  std::atomic<uint64_t> events_rejected_{0};
  RedisClient client_;
};

}  // namespace fleet

#endif  // VIN_FLEET_REDIS_FLEET_H_
