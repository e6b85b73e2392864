// The fleet's shared state in memory, for engine tests on a fake clock: what
// RedisFleet keeps in Redis (results with a TTL, leases that expire, events
// to every other replica), with the same answers, given in the next turn of
// the asking engine's loop (events: of each receiving engine's). Each engine
// gets a Replica view of it. Not thread-safe: tests drive every engine's
// loop from one thread (LoopMode::kManual).
#ifndef VIN_TESTS_TESTING_MEMORY_FLEET_H_
#define VIN_TESTS_TESTING_MEMORY_FLEET_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine_api/fleet_backend.h"
#include "retry/clock.h"
#include "upstream/local_budget.h"

namespace testing_util {

class MemoryFleet {
 public:
  explicit MemoryFleet(const retry::Clock* clock) : clock_(clock) {}

  class Replica final : public engine::FleetBackend {
   public:
    Replica(MemoryFleet* fleet, std::string name)
        : fleet_(fleet), name_(std::move(name)) {}

    void Attach(loop::EventLoop* loop) override { loop_ = loop; }
    void Detach() override { loop_ = nullptr; }

    void ClaimFlight(const std::string& key, const std::string& token,
                     absl::Duration lease,
                     std::function<void(Claim)> done) override {
      ++fleet_->claims;
      Claim c;
      if (!up_) {
        Later(std::move(done), c);  // kUnavailable
        return;
      }
      const absl::Time now = fleet_->clock_->Now();
      auto r = fleet_->results_.find(key);
      if (r != fleet_->results_.end() && r->second.expires > now) {
        c.kind = Claim::Kind::kCached;
        c.cached = std::make_shared<const std::string>(r->second.value);
      } else {
        auto& l = fleet_->leases_[key];
        if (l.expires <= now || l.token == token) {
          l = {token, now + lease};
          c.kind = Claim::Kind::kOwner;
        } else {
          c.kind = Claim::Kind::kTaken;
        }
      }
      Later(std::move(done), c);
    }
    void RenewLease(const std::string& key, const std::string& token,
                    absl::Duration lease) override {
      auto it = fleet_->leases_.find(key);
      if (up_ && it != fleet_->leases_.end() && it->second.token == token) {
        it->second.expires = fleet_->clock_->Now() + lease;
      }
    }
    void ReleaseLease(const std::string& key, const std::string& token) override {
      auto it = fleet_->leases_.find(key);
      if (up_ && it != fleet_->leases_.end() && it->second.token == token) {
        fleet_->leases_.erase(it);
      }
    }
    void StoreResult(const std::string& key, std::string cached,
                     absl::Duration ttl) override {
      if (up_) fleet_->results_[key] = {std::move(cached), fleet_->clock_->Now() + ttl};
    }
    void Publish(const engine::FleetEvent& event) override {
      if (!up_) return;
      fleet_->published.push_back(event);
      for (Replica* r : fleet_->replicas_) {
        if (r != this && r->handler_ && r->up_ && r->loop_ != nullptr) {
          r->loop_->Post([h = r->handler_, event] { h(event); });
        }
      }
    }
    void ClaimProbe(absl::Duration hold,
                    std::function<void(ProbeClaim)> done) override {
      ++fleet_->probe_claims;
      ProbeClaim c;
      if (up_) {
        const absl::Time now = fleet_->clock_->Now();
        Lease& l = fleet_->probe_;
        if (l.expires <= now || l.token == name_) {
          l = {name_, now + hold};
          c.kind = ProbeClaim::Kind::kMine;
        } else {
          c.kind = ProbeClaim::Kind::kTaken;
          c.wait = l.expires - now;
        }
      }
      if (loop_ != nullptr) loop_->Post([done = std::move(done), c] { done(c); });
    }
    void HoldProbe(absl::Duration hold) override {
      if (up_) fleet_->probe_ = {name_, fleet_->clock_->Now() + hold};
    }
    void ReleaseProbe() override {
      if (up_ && fleet_->probe_.token == name_) fleet_->probe_ = Lease{};
    }
    void OnEvent(std::function<void(engine::FleetEvent)> handler) override {
      handler_ = std::move(handler);
    }
    const std::string& replica() const override { return name_; }
    bool up() const override { return up_; }
    std::unique_ptr<upstream::UpstreamBudget> MakeBudget(
        const upstream::BudgetOptions& options,
        std::function<absl::Time()> now) override {
      return std::make_unique<upstream::LocalBudget>(options, now());
    }

    void set_up(bool up) { up_ = up; }

   private:
    void Later(std::function<void(Claim)> done, Claim c) {
      if (loop_ != nullptr) loop_->Post([done = std::move(done), c] { done(c); });
    }

    MemoryFleet* const fleet_;
    const std::string name_;
    loop::EventLoop* loop_ = nullptr;
    bool up_ = true;
    std::function<void(engine::FleetEvent)> handler_;
  };

  Replica* Add(const std::string& name) {
    owned_.push_back(std::make_unique<Replica>(this, name));
    replicas_.push_back(owned_.back().get());
    return replicas_.back();
  }
  bool HasResult(const std::string& key) const { return results_.count(key) != 0; }
  bool Leased(const std::string& key) const {
    auto it = leases_.find(key);
    return it != leases_.end() && it->second.expires > clock_->Now();
  }

  // Who holds the breaker's probe now ("" when nobody).
  std::string ProbeHolder() const {
    return probe_.expires > clock_->Now() ? probe_.token : "";
  }

  int claims = 0;
  int probe_claims = 0;
  std::vector<engine::FleetEvent> published;

 private:
  struct Stored {
    std::string value;
    absl::Time expires;
  };
  struct Lease {
    std::string token;
    absl::Time expires = absl::InfinitePast();
  };
  const retry::Clock* const clock_;
  std::map<std::string, Stored> results_;
  std::map<std::string, Lease> leases_;
  Lease probe_;
  std::vector<std::unique_ptr<Replica>> owned_;
  std::vector<Replica*> replicas_;
};

}  // namespace testing_util

#endif  // VIN_TESTS_TESTING_MEMORY_FLEET_H_
