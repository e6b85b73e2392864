// The order of the flights waiting for an upstream request (DESIGN rule
// 17): interactive flights before bulk ones, bulk keeping a minimum share
// of the VINs sent whenever it waits, and within a priority the tenants
// taking turns (deficit round robin over the VINs each contributes to a
// request, with optional weights); within a tenant, first come first
// served by the place (Seq) a flight first had, which it keeps across its
// retries.
//
// Pure and not thread-safe: owned by the upstream gate on the engine's
// loop thread.
#ifndef VIN_UPSTREAM_FAIR_QUEUE_H_
#define VIN_UPSTREAM_FAIR_QUEUE_H_

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"
#include "coalesce/flight_table.h"
#include "domain/priority.h"

namespace upstream {

struct FairShareOptions {
  // Bulk's guaranteed share of the VINs sent while it waits, in [0, 1].
  double bulk_min_share = 0.1;
  // Tenants' weights (VINs per turn); a tenant not listed weighs 1.
  absl::flat_hash_map<std::string, double> tenant_weights;
};

class FairQueue {
 public:
  using Seq = uint64_t;  // a place; never 0
  struct Ticket {
    coalesce::FlightKey key;
    uint64_t flight_id = 0;
    domain::Priority priority = domain::Priority::kInteractive;
    std::string tenant{domain::kDefaultTenant};
    absl::Time queued_at;  // when it entered the queue (for its wait)
  };

  explicit FairQueue(FairShareOptions options);

  // Puts a flight in the queue at `place` (its first place, for a flight
  // that queued before) or at the back (0).
  Seq Enqueue(Ticket ticket, Seq place = 0);
  // Takes a flight out (gone, or re-queued). Unknown places are a no-op.
  void Remove(Seq seq);

  // The flights of one request of up to `n` VINs, at most one per VIN (a
  // reference request, rule 18, alone):
  // bulk's share first when it is owed (and `bulk_allowed`), then
  // interactive flights, then bulk ones in the room left. `bulk_allowed`
  // false (bulk is over its peak-hour share): interactive flights only.
  std::vector<Ticket> Pick(size_t n, bool bulk_allowed);

  // About how many VINs go before the flight at `seq` (or, when `seq` is 0,
  // before a flight of `priority` and `tenant` queued now), by the order
  // above: every interactive one before a bulk one, and a tenant's turns
  // against the other tenants waiting at its priority.
  double Ahead(Seq seq, domain::Priority priority,
               const std::string& tenant) const;
  // The share of a request's VINs interactive flights get while bulk waits.
  double InteractiveShareWhileBulkWaits() const;

  // The queued flight at `seq`, or null.
  const Ticket* Find(Seq seq) const {
    auto it = entries_.find(seq);
    return it == entries_.end() ? nullptr : &it->second;
  }

  size_t waiting() const { return entries_.size(); }
  size_t waiting(domain::Priority p) const { return classes_[Index(p)].size; }
  double weight(const std::string& tenant) const;

  // fn(seq, ticket) for every queued flight, in the order of their places.
  template <typename Fn>
  void ForEach(Fn fn) const {
    for (const auto& [seq, ticket] : entries_) fn(seq, ticket);
  }

 private:
  struct Tenant {
    absl::btree_set<Seq> seqs;
    double deficit = 0;
  };
  struct Class {
    absl::flat_hash_map<std::string, Tenant> tenants;
    std::deque<std::string> turns;  // tenants with flights, whose turn first
    size_t size = 0;
  };
  static size_t Index(domain::Priority p) { return static_cast<size_t>(p); }
  // Up to `k` more VINs of class `c` into `out`, tenants taking turns.
  size_t TakeFrom(Class& c, size_t k, absl::flat_hash_set<std::string>* vins,
                  std::vector<Ticket>* out);
  Ticket Extract(Class& c, Tenant& t, absl::btree_set<Seq>::iterator it);

  const FairShareOptions options_;
  Seq next_seq_ = 1;
  absl::btree_map<Seq, Ticket> entries_;
  Class classes_[domain::kPriorities];
  double bulk_credit_ = 0;  // VIN slots owed to bulk
};

}  // namespace upstream

#endif  // VIN_UPSTREAM_FAIR_QUEUE_H_
