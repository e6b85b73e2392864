// The per-VIN coalescing table (DESIGN rule 5): at most one flight per
// (normalised VIN, model-year hint); every caller asking for a key in flight
// joins it as a waiter.
//
// Generic over the flight's own state and the waiter's payload so that it
// can be tested alone. Not thread-safe: owned by the engine's loop thread.
#ifndef VIN_COALESCE_FLIGHT_TABLE_H_
#define VIN_COALESCE_FLIGHT_TABLE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "domain/decode_key.h"

namespace coalesce {

using FlightKey = domain::DecodeKey;

using WaiterId = uint64_t;

template <typename State, typename Waiter>
class FlightTable {
 public:
  struct Flight {
    FlightKey key;
    uint64_t id = 0;  // unique per flight, so stale callbacks can tell
    State state;
    // Ordered by id, i.e. by arrival: events reach waiters in join order.
    absl::btree_map<WaiterId, Waiter> waiters;
  };

  // Adds `waiter` to the flight for `key`, creating the flight if there is
  // none. Returns the flight and whether it was created.
  std::pair<Flight*, bool> Join(const FlightKey& key, WaiterId id,
                                Waiter waiter) {
    auto [it, created] = flights_.try_emplace(key);
    if (created) {
      it->second = std::make_unique<Flight>();
      it->second->key = key;
      it->second->id = next_flight_id_++;
    }
    Flight* f = it->second.get();
    f->waiters.emplace(id, std::move(waiter));
    waiter_index_[id] = f;
    ++waiter_count_;
    return {f, created};
  }

  // The flight `id` waits on, or nullptr.
  Flight* FlightOf(WaiterId id) const {
    auto it = waiter_index_.find(id);
    return it == waiter_index_.end() ? nullptr : it->second;
  }

  // Removes waiter `id` from its flight and returns its payload through
  // `out`. Returns the flight it left (possibly now without waiters), or
  // nullptr when `id` is not waiting.
  Flight* Leave(WaiterId id, Waiter* out) {
    auto it = waiter_index_.find(id);
    if (it == waiter_index_.end()) return nullptr;
    Flight* f = it->second;
    waiter_index_.erase(it);
    auto w = f->waiters.find(id);
    *out = std::move(w->second);
    f->waiters.erase(w);
    --waiter_count_;
    return f;
  }

  Flight* Find(const FlightKey& key) const {
    auto it = flights_.find(key);
    return it == flights_.end() ? nullptr : it->second.get();
  }
  // The flight for `key` if it is flight `flight_id` (not a newer one).
  Flight* Find(const FlightKey& key, uint64_t flight_id) const {
    Flight* f = Find(key);
    return f != nullptr && f->id == flight_id ? f : nullptr;
  }

  // Removes the flight and hands its remaining waiters to the caller.
  absl::btree_map<WaiterId, Waiter> Erase(Flight* f) {
    absl::btree_map<WaiterId, Waiter> waiters = std::move(f->waiters);
    for (const auto& [id, w] : waiters) waiter_index_.erase(id);
    waiter_count_ -= waiters.size();
    flights_.erase(f->key);  // destroys *f
    return waiters;
  }

  size_t flights() const { return flights_.size(); }
  size_t waiters() const { return waiter_count_; }

  template <typename Fn>
  void ForEachFlight(Fn fn) const {
    for (const auto& [key, f] : flights_) fn(f.get());
  }

 private:
  uint64_t next_flight_id_ = 1;
  size_t waiter_count_ = 0;
  absl::flat_hash_map<FlightKey, std::unique_ptr<Flight>> flights_;
  absl::flat_hash_map<WaiterId, Flight*> waiter_index_;
};

}  // namespace coalesce

#endif  // VIN_COALESCE_FLIGHT_TABLE_H_
