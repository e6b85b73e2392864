// The upstream gate (DESIGN rules 9, 10, 12 and 17): the flights ready for
// an upstream request, in the fair order of FairQueue (interactive first,
// bulk's minimum share, tenants in turns, a flight keeping its first place
// across its retries), in front of the budget. When a token is granted, up
// to `batch_max` ready flights leave together, as one DecodeVINValuesBatch
// request; a lone ready flight leaves alone at once. Batching thus comes
// from the backlog, never from waiting for company.
//
// During peak hours (the caller says when) bulk flights use at most
// `bulk_peak_share` of the effective rate: a bucket of their own at that
// share, charged the part of each request they fill; a request of bulk
// flights alone waits for it (and takes no token of the budget meanwhile,
// so interactive flights find theirs).
//
// Not thread-safe: owned by the engine's loop thread. Times are the engine's
// monotonic clock.
#ifndef VIN_UPSTREAM_UPSTREAM_GATE_H_
#define VIN_UPSTREAM_UPSTREAM_GATE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "upstream/fair_queue.h"
#include "upstream/token_bucket.h"
#include "upstream/upstream_budget.h"

namespace upstream {

struct GateOptions {
  int batch_max = 50;  // >= 1 (1: no batching)
  FairShareOptions share;
  // Bulk's share of the rate during peak hours, in (0, 1]; 1: no limit.
  double bulk_peak_share = 0.5;
};

class UpstreamGate {
 public:
  static GateOptions BatchingOnly(int batch_max) {
    GateOptions o;
    o.batch_max = batch_max;
    o.bulk_peak_share = 1.0;
    return o;
  }

  using Seq = FairQueue::Seq;  // a place in the queue; never 0
  using Ticket = FairQueue::Ticket;

  // `budget` is not owned.
  UpstreamGate(UpstreamBudget* budget, GateOptions options, absl::Time now);
  // Batches of `batch_max`, bulk's default share, no peak hours.
  UpstreamGate(UpstreamBudget* budget, int batch_max)
      : UpstreamGate(budget, BatchingOnly(batch_max), absl::InfinitePast()) {}

  // Puts a flight in the queue: at the back, or at `place` (the Seq it had
  // when it first queued) for a flight that queued before.
  Seq Enqueue(Ticket ticket, Seq place = 0);
  // Takes a flight out of the queue (it left, or stopped). Unknown or taken
  // places are a no-op.
  void Remove(Seq seq);

  // The tickets of one request, if one may start at `now` (`peak`: NHTSA's
  // peak hours): takes a token and up to batch_max tickets in the fair
  // order, at most one per VIN (vPIC's batch answer is matched by VIN).
  // Empty when nothing may go yet.
  std::vector<Ticket> Take(absl::Time now, bool peak = false);
  // When Take() may next succeed, while something waits.
  absl::optional<absl::Time> NextStart(absl::Time now, bool peak = false) const;
  // The estimated start of the request that will carry the flight at `seq`
  // (of one of `priority` and `tenant` queued now, when `seq` is 0), from
  // the flights that go before it, the batch size, the budget and, for
  // bulk at peak hours, its share. Ignores the concurrency limit, which the
  // engine applies on top.
  absl::Time EstimatedStart(Seq seq, absl::Time now, bool peak = false,
                            domain::Priority priority = domain::Priority::kInteractive,
                            const std::string& tenant = std::string(domain::kDefaultTenant)) const;

  const Ticket* Find(Seq seq) const { return queue_.Find(seq); }
  size_t waiting() const { return queue_.waiting(); }
  size_t waiting(domain::Priority p) const { return queue_.waiting(p); }
  int batch_max() const { return batch_max_; }
  UpstreamBudget& budget() { return *budget_; }

  // Calls fn(seq, ticket) for every queued flight, in the order of places.
  template <typename Fn>
  void ForEach(Fn fn) const {
    queue_.ForEach(fn);
  }

 private:
  // The bulk bucket follows the budget's effective rate.
  void FollowRate(absl::Time now) const;
  bool BulkMayGo(absl::Time now, bool peak) const;

  UpstreamBudget* const budget_;
  const int batch_max_;
  const double bulk_peak_share_;
  FairQueue queue_;
  mutable TokenBucket bulk_;  // at peak hours: bulk's share of the rate
};

}  // namespace upstream

#endif  // VIN_UPSTREAM_UPSTREAM_GATE_H_
