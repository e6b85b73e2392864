// The fleet's shared state in Redis (engine::FleetBackend): finished
// decodes under <prefix>result:<key> (with the cache TTL), flight leases
// under <prefix>lease:<key> (SET NX PX, renewed, released by a
// token-checked script), the breaker's probe under <prefix>breaker:probe
// (the same kind of lease, named after the replica), and flights' and the
// breaker's events on the channel <prefix>events
// (vin.fleet.v1.FleetEvent, fleet/event_mapping.h), which every replica
// reads and filters.
//
// Nothing read from Redis is believed before it is checked (fleet/trust.h):
// every value this replica writes is sealed for its key or channel (and
// signed, with the fleet's secret: fleet/seal.h); a cached result that
// fails the checks is counted, deleted from Redis (if it is still the
// same), and the flight claims the lease as on a miss, so the VIN is
// decoded live; an event that fails them is counted and dropped. Both are
// told to the OnRejected handler. Events' durations are cut to this
// replica's limits, and so is the probe's wait.
//
// When Redis is down or slow, every call answers (in the loop's next turn)
// that it is unavailable (the engine then goes on alone); it comes back by
// itself. On the engine's loop, as engine::FleetBackend says; up(),
// errors(), commands(), rejected() and events_rejected() may be read from
// any thread.
#ifndef VIN_FLEET_REDIS_FLEET_H_
#define VIN_FLEET_REDIS_FLEET_H_

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "engine_api/fleet_backend.h"
#include "fleet/event_mapping.h"
#include "fleet/redis_client.h"
#include "fleet/trust.h"

namespace fleet {

struct RedisFleetOptions {
  RedisAddress address;
  std::shared_ptr<const RedisTls> tls;  // for a rediss:// address
  std::string prefix = "vin:";
  absl::Duration timeout = absl::Milliseconds(50);  // longest wait on Redis
  // The replicas' number, for the local bucket of the fallback
  // (--upstream_rate / hint).
  int fleet_size_hint = 1;
  // What is believed (the secret, the result decoder, the limits).
  Trust trust;
  // Redis went down (false) or came back (true).
  std::function<void(bool up)> on_state;
  // The wall clock the checks go by (null: the real one).
  std::function<absl::Time()> wall_clock;
};

class RedisFleet final : public engine::FleetBackend {
 public:
  explicit RedisFleet(RedisFleetOptions options);

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

  // Where values not believed are told (what, and why), on the loop; set
  // before Attach.
  void OnRejected(std::function<void(Rejection, const std::string&)> handler) {
    on_rejected_ = std::move(handler);
  }
  // Runs `handler` once, on the loop, the first time Redis has answered and
  // confirmed the events' subscription (RedisClient::OnJoined); set before
  // Attach.
  void OnJoined(std::function<void()> handler) {
    client_.OnJoined(std::move(handler));
  }
  // Connections Redis refused for a reason of the configuration
  // (RedisClient::OnProblem); set before Attach.
  void OnProblem(std::function<void(const absl::Status&)> handler) {
    client_.OnProblem(std::move(handler));
  }
  // Values not believed since the start, by what was wrong.
  uint64_t rejected(Rejection what) const {
    return rejected_[static_cast<size_t>(what)].load();
  }
  // Events of the channel not believed (every event_* rejection).
  uint64_t events_rejected() const;

  uint64_t errors() const { return client_.errors(); }
  uint64_t commands() const { return client_.commands(); }
  RedisClient& client() { return client_; }
  const std::string& prefix() const { return prefix_; }

 private:
  absl::Time WallNow() const;
  void Reject(Rejection what, const std::string& why);
  std::string ResultKey(const std::string& key) const {
    return absl::StrCat(prefix_, "result:", key);
  }
  // After a cached value was rejected: deletes it if it is still there,
  // and claims the lease as on a miss.
  void DiscardAndClaim(const std::string& key, const std::string& rejected,
                       const std::string& token, absl::Duration lease,
                       std::function<void(Claim)> done);

  const std::string prefix_;
  const std::string channel_;
  const std::string replica_;  // random, per process
  const int fleet_size_hint_;
  const Trust trust_;
  const std::function<absl::Time()> wall_clock_;
  EventChecks events_;  // the loop's
  std::function<void(Rejection, const std::string&)> on_rejected_;
  std::array<std::atomic<uint64_t>, kRejections> rejected_{};
  RedisClient client_;
};

}  // namespace fleet

#endif  // VIN_FLEET_REDIS_FLEET_H_
