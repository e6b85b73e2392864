// The fixture of rule 17's engine tests (fair_share_test.cc and
// fair_share_order_test.cc): an engine on a fake clock against a scripted
// upstream that answers every request at once, and cold DecodeBatch-like
// feeds driven item by item.
#ifndef VIN_TESTS_ENGINE_FAIR_SHARE_FIXTURE_H_
#define VIN_TESTS_ENGINE_FAIR_SHARE_FIXTURE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "engine/engine.h"
#include "gtest/gtest.h"
#include "manual_engine_fixture.h"
#include "testing/vin_gen.h"
#include "upstream/peak_hours.h"

namespace engine {
namespace fair_share_test {

using domain::Priority;
using testing_util::ValidVin;

inline constexpr absl::Duration kStep = absl::Milliseconds(10);

// A caller that only counts its end.
class Counted final : public DecodeListener {
 public:
  explicit Counted(int* ended) : ended_(ended) {}
  void OnQueued(const Queued&) override {}
  void OnRetrying(const Retrying&) override {}
  void OnDone(std::shared_ptr<const DecodeResult>) override { ++*ended_; done = true; }
  void OnFailed(const Failure&) override { ++*ended_; }
  bool done = false;

 private:
  int* const ended_;
};

// A DecodeBatch stream: `window` items in progress, the next sent when one
// ends, `total` in all, each a new VIN.
struct Feed {
  std::string tenant;
  Priority priority = Priority::kBulk;
  int window = 256;
  int total = 5000;
  uint64_t first_vin = 0;  // ValidVin(first_vin + i) for item i
  int sent = 0;
  int ended = 0;
  absl::Time finished = absl::InfiniteFuture();
  std::vector<std::unique_ptr<Counted>> items;
};

class FairShareTest : public ManualEngineTest {
 protected:
  static EngineOptions Options() {
    EngineOptions o;
    o.budget.rate_per_minute = 600;  // a token every 100 ms
    o.budget.burst = 1;
    o.upstream_batch_max = 50;
    o.max_upstream_concurrency = 1000;
    o.breaker.failures = 0;
    o.uniform = Cycling();
    o.retry_base = absl::Milliseconds(100);  // the feeds' stagger
    return o;
  }

  // Moves the clock to `local` in New York before the engine is made.
  void StartAt(absl::CivilSecond local) {
    absl::TimeZone ny;
    ASSERT_TRUE(absl::LoadTimeZone("America/New_York", &ny)) << "tzdata installed?";
    clock_.Advance(absl::FromCivil(local, ny) - clock_.Now());
  }

  void Refill(Feed& f) {
    while (f.sent < f.total && f.sent - f.ended < f.window) {
      DecodeRequest r;
      r.vin = ValidVin(f.first_vin + static_cast<uint64_t>(f.sent++));
      r.stagger = true;
      r.priority = f.priority;
      r.tenant = f.tenant;
      f.items.push_back(std::make_unique<Counted>(&f.ended));
      ASSERT_TRUE(engine_->Submit(r, f.items.back().get()).ok());
      tenant_of_[r.vin] = f.tenant;
    }
    if (f.ended == f.total && f.finished == absl::InfiniteFuture()) {
      f.finished = clock_.Now();
    }
  }

  // Runs for `d` (or until every feed has finished), the feeds refilled
  // and every open request answered at each step; `each` runs first at
  // every step.
  template <typename Each>
  void Run(std::vector<Feed>& feeds, absl::Duration d, Each each) {
    const absl::Time end = clock_.Now() + d;
    while (clock_.Now() < end) {
      each();
      bool all = true;
      for (Feed& f : feeds) {
        Refill(f);
        all &= f.finished != absl::InfiniteFuture();
      }
      if (all && !feeds.empty()) return;
      upstream_->ReplyAll([this](vpic::UpstreamClient::RequestId id) {
        return upstream_->Ok(id);
      });
      Turn();
      clock_.Advance(kStep);
    }
  }
  void Run(std::vector<Feed>& feeds, absl::Duration d) {
    Run(feeds, d, [] {});
  }

  // VINs sent per tenant in [from, to).
  std::map<std::string, int> SentBy(absl::Time from, absl::Time to) const {
    std::map<std::string, int> out;
    for (const auto& s : upstream_->sent()) {
      if (s.at < from || s.at >= to) continue;
      for (const auto& e : s.entries) ++out[tenant_of_.at(e.vin)];
    }
    return out;
  }
  int RequestsIn(absl::Time from, absl::Time to) const {
    int n = 0;
    for (const auto& s : upstream_->sent()) n += s.at >= from && s.at < to;
    return n;
  }
  absl::Time SentAt(const std::string& vin) const {
    for (const auto& s : upstream_->sent()) {
      for (const auto& e : s.entries) {
        if (e.vin == vin) return s.at;
      }
    }
    return absl::InfiniteFuture();
  }

  // The engine goes before the feeds' callers do (it fails what waits).
  void Stop() { engine_.reset(); }

  std::map<std::string, std::string> tenant_of_;
};

inline std::vector<Feed> EightFeeds() {
  std::vector<Feed> feeds(8);
  for (int k = 0; k < 8; ++k) {
    feeds[k].tenant = absl::StrCat("feed", k);
    feeds[k].first_vin = 1000000 * static_cast<uint64_t>(k + 1);
  }
  return feeds;
}

}  // namespace fair_share_test
}  // namespace engine

#endif  // VIN_TESTS_ENGINE_FAIR_SHARE_FIXTURE_H_
