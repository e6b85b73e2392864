// The engine tests' fixture: an engine against the fake vPIC over loopback
// HTTP (engine_test.cc, engine_sharing_test.cc, engine_leaving_test.cc).
#ifndef VIN_TESTS_ENGINE_ENGINE_TEST_FIXTURE_H_
#define VIN_TESTS_ENGINE_ENGINE_TEST_FIXTURE_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/engine.h"
#include "fake_vpic/fake_vpic.h"
#include "gtest/gtest.h"
#include "testing/recording_listener.h"

namespace engine {

constexpr char kFord[] = "1FTMW1T88MFA00001";
constexpr char kHonda[] = "1HGCM82633A004352";
constexpr absl::Duration kBase = absl::Milliseconds(40);
constexpr absl::Duration kCap = absl::Milliseconds(400);

inline std::vector<fakevpic::Step> Steps(const std::string& text) {
  auto steps = fakevpic::Step::ParseList(text);
  EXPECT_TRUE(steps.ok()) << steps.status();
  return *steps;
}

class EngineTest : public testing::Test {
 protected:
  void SetUp() override {
    auto fake = fakevpic::FakeVpic::Start();
    ASSERT_TRUE(fake.ok()) << fake.status();
    fake_ = *std::move(fake);
  }

  void MakeEngine(EngineOptions o = {}) {
    o.vpic_base_url = fake_->base_url();
    if (o.retry_base == EngineOptions().retry_base) o.retry_base = kBase;
    if (o.retry_cap == EngineOptions().retry_cap) o.retry_cap = kCap;
    if (o.attempt_timeout == EngineOptions().attempt_timeout) {
      o.attempt_timeout = absl::Seconds(2);
    }
    auto e = Engine::Create(std::move(o));
    ASSERT_TRUE(e.ok()) << e.status();
    engine_ = *std::move(e);
  }

  Engine::WaiterId Submit(const std::string& vin,
                          testing_util::RecordingListener* l,
                          absl::Time deadline = absl::InfiniteFuture()) {
    DecodeRequest r;
    r.vin = vin;
    if (deadline != absl::InfiniteFuture()) r.timeout = deadline - absl::Now();
    const Admission admitted = engine_->Submit(r, l);
    EXPECT_TRUE(admitted.ok()) << admitted.failure().message;
    return admitted.id();
  }

  // No flight, waiter, wake-up or upstream request is left.
  bool Idle() {
    return engine_->WaitForStats(
        [](const EngineStats& s) {
          return s.flights == 0 && s.waiters == 0 && s.pending_wakeups == 0 &&
                 s.upstream_active == 0;
        },
        absl::Seconds(10));
  }

  std::unique_ptr<fakevpic::FakeVpic> fake_;
  std::unique_ptr<Engine> engine_;
};

}  // namespace engine

#endif  // VIN_TESTS_ENGINE_ENGINE_TEST_FIXTURE_H_
