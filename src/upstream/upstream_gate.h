// The upstream gate (DESIGN rules 9, 10 and 12): the queue of flights ready
// for an upstream request, first come first served, in front of the budget.
// A flight keeps the place it first had: its retry is not sent behind every
// flight that arrived after it. When a
// token is granted, up to `batch_max` ready flights leave together, as one
// DecodeVINValuesBatch request; a lone ready flight leaves alone at once.
// Batching thus comes from the backlog, never from waiting for company.
//
// Not thread-safe: owned by the engine's loop thread. Times are the engine's
// monotonic clock.
#ifndef VIN_UPSTREAM_UPSTREAM_GATE_H_
#define VIN_UPSTREAM_UPSTREAM_GATE_H_

#include <cstdint>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "coalesce/flight_table.h"
#include "upstream/upstream_budget.h"

namespace upstream {

class UpstreamGate {
 public:
  using Seq = uint64_t;  // a place in the queue; never 0
  struct Ticket {
    coalesce::FlightKey key;
    uint64_t flight_id = 0;
  };

  // `budget` is not owned. `batch_max` >= 1 (1: no batching).
  UpstreamGate(UpstreamBudget* budget, int batch_max);

  // Puts a flight in the queue: at the back, or at `place` (the Seq it had
  // when it first queued) for a flight that queued before.
  Seq Enqueue(Ticket ticket, Seq place = 0);
  // Takes a flight out of the queue (it left, or stopped). Unknown or taken
  // places are a no-op.
  void Remove(Seq seq);

  // The tickets of one request, if one may start at `now`: takes a token
  // and removes up to batch_max tickets from the front of the queue, at most
  // one per VIN (vPIC's batch answer is matched by VIN). Empty when nothing
  // waits or the budget gives no token yet.
  std::vector<Ticket> Take(absl::Time now);
  // When Take() may next succeed, while something waits.
  absl::optional<absl::Time> NextStart(absl::Time now) const;
  // The estimated start of the request that will carry the flight at `seq`
  // (of one that would be queued now, when `seq` is 0), from the flights
  // queued ahead of it, the batch size and the budget. Ignores the
  // concurrency limit, which the engine applies on top.
  absl::Time EstimatedStart(Seq seq, absl::Time now) const;

  size_t waiting() const { return queue_.size(); }
  int batch_max() const { return batch_max_; }
  UpstreamBudget& budget() { return *budget_; }

  // Calls fn(seq, ticket) for every queued flight, front first.
  template <typename Fn>
  void ForEach(Fn fn) const {
    for (const auto& [seq, ticket] : queue_) fn(seq, ticket);
  }

 private:
  UpstreamBudget* const budget_;
  const int batch_max_;
  Seq next_seq_ = 1;
  absl::btree_map<Seq, Ticket> queue_;
};

}  // namespace upstream

#endif  // VIN_UPSTREAM_UPSTREAM_GATE_H_
