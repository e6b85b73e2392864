// Rule 21, measured on this replica's traffic: every live vPIC answer (or a
// --parity_sample of them) is decoded again from the snapshot on a thread
// of its own, off the answer's path, and compared per variable the
// snapshot can give (snapshot/parity.h). The comparisons feed the metrics
// (vin_snapshot_parity_total{variable,outcome}), the admin report
// (GetParity, GET /v1/parity) and the snapshot's health: NOT_SERVING while
// the make/model/year agreement over the last --parity_window compared
// decodes is below --parity_min, with a log line naming the worst
// variables; SERVING again once it is back above.
//
// Offer() is what the engine's loop calls: a draw and a push onto a bounded
// queue (full: the answer is not compared, and counted). Thread-safe.
#ifndef VIN_SERVER_PARITY_CHECKER_H_
#define VIN_SERVER_PARITY_CHECKER_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "domain/decode_result.h"
#include "snapshot/parity.h"
#include "snapshot/snapshot_store.h"
#include "vin/v1/admin.pb.h"

namespace server {

struct ParityOptions {
  double sample = 1.0;  // --parity_sample: the share of live answers compared
  int window = 1000;    // --parity_window
  double min = 0.97;    // --parity_min
  size_t queue = 4096;  // answers waiting to be compared
};

class ParityChecker {
 public:
  // Told when the snapshot's parity health changes (true: good enough).
  using Health = std::function<void(bool ok)>;
  using Log = std::function<void(bool warning, const std::string& line)>;
  // `uniform` draws in [0, 1) for the sample (default: absl's generator);
  // `wall` is the clock the examples are stamped with.
  ParityChecker(ParityOptions options, snapshot::SnapshotStore* snapshots,
                Health health, Log log,
                std::function<double()> uniform = nullptr,
                std::function<absl::Time()> wall = nullptr);
  ~ParityChecker();

  // A live answer (the engine's loop). Cheap.
  void Offer(std::shared_ptr<const domain::DecodeResult> result,
             int model_year_hint);
  // Blocks until every answer offered so far is compared (tests, a drain).
  void Flush();

  vin::v1::ParityReport Report() const;
  // Monotonic counts since the start, by (variable, outcome), for the
  // metrics; and the answers not compared for a full queue.
  std::map<std::pair<std::string, std::string>, int64_t> Counts() const;
  uint64_t dropped() const { return dropped_.load(); }
  bool healthy() const;

 private:
  struct Item {
    std::shared_ptr<const domain::DecodeResult> result;
    int model_year_hint = 0;
  };
  void Loop();
  // One live answer compared with `snap`; `wall` and `reference_year` are
  // its batch's, as `snap` is.
  void Compare(const snapshot::Snapshot& snap, const Item& item,
               absl::Time wall, int reference_year);
  void Judge();

  const ParityOptions options_;
  snapshot::SnapshotStore* const snapshots_;
  const Health health_;
  const Log log_;
  const std::function<double()> uniform_;
  const std::function<absl::Time()> wall_;
  snapshot::ParityTracker tracker_;
  std::atomic<uint64_t> dropped_{0};

  mutable absl::Mutex mu_;
  std::deque<Item> queue_ ABSL_GUARDED_BY(mu_);
  uint64_t offered_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t compared_ ABSL_GUARDED_BY(mu_) = 0;  // taken off the queue and done
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  int flushing_ ABSL_GUARDED_BY(mu_) = 0;    // Flush() calls waiting
  std::string sha256_ ABSL_GUARDED_BY(mu_);  // the snapshot compared now
  bool healthy_ ABSL_GUARDED_BY(mu_) = true;
  std::thread thread_;
};

}  // namespace server

#endif  // VIN_SERVER_PARITY_CHECKER_H_
