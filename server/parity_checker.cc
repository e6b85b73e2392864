#include "server/parity_checker.h"

#include <algorithm>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"

namespace server {
namespace {

constexpr size_t kWorstNamed = 3;
// The worker wakes when this many answers wait, or after kGather.
constexpr size_t kBatch = 64;
constexpr absl::Duration kGather = absl::Milliseconds(100);

void ToTimestamp(absl::Time t, google::protobuf::Timestamp* ts) {
  const int64_t us = absl::ToUnixMicros(t);
  ts->set_seconds(us / 1000000);
  ts->set_nanos(static_cast<int32_t>((us % 1000000) * 1000));
}

// A variable's share of comparisons where the snapshot did not say what
// vPIC said.
double Disagreement(const snapshot::VariableCounts& c) {
  const int64_t bad =
      c.by_outcome[static_cast<int>(snapshot::ParityOutcome::kDiffer)] +
      c.by_outcome[static_cast<int>(snapshot::ParityOutcome::kSnapshotMissing)];
  const int64_t all =
      bad + c.by_outcome[static_cast<int>(snapshot::ParityOutcome::kAgree)];
  return all == 0 ? 0 : static_cast<double>(bad) / static_cast<double>(all);
}

}  // namespace

ParityChecker::ParityChecker(ParityOptions options,
                             snapshot::SnapshotStore* snapshots, Health health,
                             Log log, std::function<double()> uniform,
                             std::function<absl::Time()> wall)
    : options_(options),
      snapshots_(snapshots),
      health_(std::move(health)),
      log_(std::move(log)),
      uniform_(uniform ? std::move(uniform)
                       : [gen = std::make_shared<absl::BitGen>(),
                          mu = std::make_shared<absl::Mutex>()]() {
                           absl::MutexLock lock(mu.get());
                           return absl::Uniform<double>(*gen, 0.0, 1.0);
                         }),
      wall_(wall ? std::move(wall) : [] { return absl::Now(); }),
      tracker_(static_cast<size_t>(std::max(1, options.window))) {
  thread_ = std::thread([this] { Loop(); });
}

ParityChecker::~ParityChecker() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void ParityChecker::Offer(std::shared_ptr<const domain::DecodeResult> result,
                          int model_year_hint) {
  if (options_.sample <= 0 || result == nullptr) return;
  if (options_.sample < 1 && uniform_() >= options_.sample) return;
  absl::MutexLock lock(&mu_);
  if (queue_.size() >= options_.queue) {
    dropped_.fetch_add(1);
    return;
  }
  ++offered_;
  queue_.push_back(Item{std::move(result), model_year_hint});
}

void ParityChecker::Flush() {
  absl::MutexLock lock(&mu_);
  const uint64_t target = offered_;
  ++flushing_;  // the worker takes what waits at once
  auto done = [this, target]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return compared_ >= target || stop_;
  };
  mu_.Await(absl::Condition(&done));
  --flushing_;
}

void ParityChecker::Loop() {
  std::vector<Item> batch;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      // Woken per batch, not per answer: a thread woken for each of a
      // batch answer's 50 VINs cost more than the comparisons (perf).
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stop_ || flushing_ > 0 || queue_.size() >= kBatch;
      };
      mu_.AwaitWithTimeout(absl::Condition(&ready), kGather);
      if (stop_) return;
      while (!queue_.empty()) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    // The clock, the calendar and the snapshot once a batch, and the health
    // judged once a batch: per answer they cost more than a tenth of the
    // comparison.
    const absl::Time wall = wall_();
    const int reference_year =
        static_cast<int>(absl::ToCivilYear(wall, absl::UTCTimeZone()).year());
    std::shared_ptr<const snapshot::Snapshot> snap =
        snapshots_ == nullptr || batch.empty() ? nullptr
                                               : snapshots_->Current();
    if (snap != nullptr) {
      {
        absl::MutexLock lock(&mu_);
        if (sha256_ != snap->info().sha256) {
          // Another snapshot: its agreement is measured from scratch.
          if (!sha256_.empty()) tracker_.Reset();
          sha256_ = snap->info().sha256;
        }
      }
      for (const Item& item : batch) {
        Compare(*snap, item, wall, reference_year);
      }
      Judge();
    }
    // The answers freed outside the lock Offer takes on the engine's loop.
    const size_t done = batch.size();
    batch.clear();
    absl::MutexLock lock(&mu_);
    compared_ += done;
  }
}

void ParityChecker::Compare(const snapshot::Snapshot& snap, const Item& item,
                            absl::Time wall, int reference_year) {
  const domain::DecodeResult& live = *item.result;
  absl::StatusOr<std::vector<std::string>> decoded =
      snap.DecodeVariables(live.vin, item.model_year_hint, reference_year);
  if (!decoded.ok()) return;
  tracker_.Record(
      live.vin, wall,
      snapshot::CompareDecodes(live.vehicle, *decoded, snap.variables()));
}

void ParityChecker::Judge() {
  size_t judged = 0;
  const absl::optional<double> agreement = tracker_.Agreement(&judged);
  // Judged once the window is full: a handful of decodes says little.
  if (!agreement.has_value() ||
      judged < static_cast<size_t>(std::max(1, options_.window))) {
    return;
  }
  const bool ok = *agreement >= options_.min;
  {
    absl::MutexLock lock(&mu_);
    if (ok == healthy_) return;
    healthy_ = ok;
  }
  if (ok) {
    log_(false, absl::StrFormat(
                    "snapshot parity is back: make/model/year agree in %.1f%% "
                    "of the last %d live answers (--parity_min %.1f%%)",
                    *agreement * 100, options_.window, options_.min * 100));
  } else {
    // The variables the snapshot gets wrong most often.
    const snapshot::ParityReport report = tracker_.Report();
    std::vector<std::pair<double, std::string>> worst;
    for (const auto& [name, counts] : report.variables) {
      const double d = Disagreement(counts);
      if (d > 0) worst.emplace_back(d, name);
    }
    std::sort(worst.rbegin(), worst.rend());
    if (worst.size() > kWorstNamed) worst.resize(kWorstNamed);
    std::vector<std::string> named;
    for (const auto& [d, name] : worst) {
      named.push_back(absl::StrFormat("%s %.1f%%", name, d * 100));
    }
    log_(true,
         absl::StrFormat(
             "snapshot parity is low: make/model/year agree in %.1f%% of the "
             "last %d live answers, below --parity_min %.1f%%; the snapshot "
             "is reported NOT_SERVING (its answers are still given, "
             "labelled). Disagreeing most: %s",
             *agreement * 100, options_.window, options_.min * 100,
             named.empty() ? "(none)" : absl::StrJoin(named, ", ")));
  }
  if (health_) health_(ok);
}

bool ParityChecker::healthy() const {
  absl::MutexLock lock(&mu_);
  return healthy_;
}

std::map<std::pair<std::string, std::string>, int64_t> ParityChecker::Counts()
    const {
  std::map<std::pair<std::string, std::string>, int64_t> out;
  for (const auto& [variable, by_outcome] : tracker_.Totals()) {
    for (int o = 0; o < snapshot::kParityOutcomes; ++o) {
      if (by_outcome[o] == 0) continue;
      out[{variable, snapshot::ParityOutcomeName(
                         static_cast<snapshot::ParityOutcome>(o))}] =
          by_outcome[o];
    }
  }
  return out;
}

vin::v1::ParityReport ParityChecker::Report() const {
  const snapshot::ParityReport r = tracker_.Report();
  vin::v1::ParityReport out;
  out.set_compared(r.compared);
  out.set_make_model_year_agreement(r.make_model_year_agreement.value_or(0));
  {
    absl::MutexLock lock(&mu_);
    out.set_snapshot_sha256(sha256_);
  }
  for (const auto& [name, c] : r.variables) {
    vin::v1::VariableParity* v = out.add_variables();
    v->set_variable(name);
    using snapshot::ParityOutcome;
    v->set_agree(c.by_outcome[static_cast<int>(ParityOutcome::kAgree)]);
    v->set_differ(c.by_outcome[static_cast<int>(ParityOutcome::kDiffer)]);
    v->set_snapshot_missing(
        c.by_outcome[static_cast<int>(ParityOutcome::kSnapshotMissing)]);
    v->set_live_missing(
        c.by_outcome[static_cast<int>(ParityOutcome::kLiveMissing)]);
    for (const snapshot::ParityExample& e : c.examples) {
      vin::v1::ParityExample* x = v->add_examples();
      x->set_vin(e.vin);
      x->set_live(e.live);
      x->set_snapshot(e.snapshot);
      ToTimestamp(e.time, x->mutable_time());
    }
  }
  return out;
}

}  // namespace server
