// The fixture of the fleet-mode engine tests on a fake clock: several
// engines sharing one in-memory fleet (the state RedisFleet keeps in Redis),
// each in front of a scripted upstream, their loops turned by the test.
#ifndef VIN_TESTS_ENGINE_FLEET_ENGINE_FIXTURE_H_
#define VIN_TESTS_ENGINE_FLEET_ENGINE_FIXTURE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/engine.h"
#include "gtest/gtest.h"
#include "metrics/metrics.h"
#include "testing/memory_fleet.h"
#include "testing/recording_listener.h"
#include "testing/scripted_upstream.h"

namespace engine {

using testing_util::MemoryFleet;
using testing_util::RecordingListener;
using testing_util::ScriptedUpstream;

constexpr absl::Duration kLease = absl::Seconds(3);

// The bytes a caller would be sent, enough to tell results apart.
inline std::string Encode(const DecodeResult& r) {
  return absl::StrCat(r.vin, " ", r.vehicle.make, " source=",
                      static_cast<int>(r.source), " attempts=", r.attempts);
}

class FleetEngineTest : public testing::Test {
 protected:
  struct Node {
    metrics::ServiceMetrics metrics;  // outlives the engine
    MemoryFleet::Replica* fleet = nullptr;
    ScriptedUpstream* upstream = nullptr;
    std::unique_ptr<Engine> engine;
    bool alive = true;  // a dead node's loop never runs again
  };

  // `tweak` changes the options before the engine is made.
  Node* Make(const std::string& name,
             const std::function<void(EngineOptions*)>& tweak = nullptr) {
    EngineOptions o;
    o.clock = &clock_;
    o.budget.rate_per_minute = 0;
    o.upstream_batch_max = 1;
    o.retry_base = absl::Milliseconds(100);
    o.retry_cap = absl::Milliseconds(100);
    o.budget.retry_ratio = -1;  // every retry allowed
    o.uniform = [] { return 0.5; };
    o.encoder = Encode;
    o.fleet_lease = kLease;
    auto node = std::make_unique<Node>();
    node->fleet = fleet_.Add(name);
    o.fleet = node->fleet;
    o.metrics = &node->metrics;
    if (tweak) tweak(&o);
    auto upstream = std::make_unique<ScriptedUpstream>(&clock_);
    node->upstream = upstream.get();
    auto e = Engine::Create(std::move(o), std::move(upstream), LoopMode::kManual);
    EXPECT_TRUE(e.ok()) << e.status();
    node->engine = *std::move(e);
    nodes_.push_back(std::move(node));
    return nodes_.back().get();
  }

  RecordingListener* Submit(Node* n, const std::string& vin) {
    DecodeRequest r;
    r.vin = vin;
    return Submit(n, r);
  }
  // A reference request (rule 18): "GetModelsForMake/honda".
  RecordingListener* Ask(Node* n, const std::string& reference) {
    DecodeRequest r;
    r.reference = reference;
    return Submit(n, r);
  }
  RecordingListener* Submit(Node* n, const DecodeRequest& r) {
    listeners_.push_back(std::make_unique<RecordingListener>());
    EXPECT_TRUE(n->engine->Submit(r, listeners_.back().get()).ok());
    return listeners_.back().get();
  }

  // A few turns of every live engine's loop (posted work hops between
  // them through the fleet).
  void Turn() {
    for (int i = 0; i < 4; ++i) {
      for (auto& n : nodes_) {
        if (n->alive) n->engine->RunOnce();
      }
    }
  }
  void Advance(absl::Duration d) {
    const absl::Time end = clock_.Now() + d;
    while (clock_.Now() < end) {
      clock_.Advance(absl::Milliseconds(50));
      Turn();
    }
  }
  static std::vector<std::string> Kinds(const RecordingListener* l) {
    return l->kinds();
  }

  retry::FakeClock clock_{absl::UnixEpoch() + absl::Hours(10)};
  MemoryFleet fleet_{&clock_};  // outlives the engines
  std::vector<std::unique_ptr<RecordingListener>> listeners_;
  std::vector<std::unique_ptr<Node>> nodes_;
};

}  // namespace engine

#endif  // VIN_TESTS_ENGINE_FLEET_ENGINE_FIXTURE_H_
