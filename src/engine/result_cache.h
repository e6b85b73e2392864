// The cache of finished decodes (DESIGN rule 8): LRU with a time-to-live.
// Failures are never stored. Not thread-safe: owned by the loop thread.
#ifndef VIN_ENGINE_RESULT_CACHE_H_
#define VIN_ENGINE_RESULT_CACHE_H_

#include <list>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "coalesce/flight_table.h"
#include "engine/types.h"

namespace engine {

class ResultCache {
 public:
  // capacity 0 disables the cache.
  ResultCache(size_t capacity, absl::Duration ttl);

  // Stores `result` (a live vPIC decode) for `key`, evicting the least
  // recently used entry when full.
  void Insert(const coalesce::FlightKey& key, const DecodeResult& result,
              absl::Time now);
  // The stored result as a cache answer (source CACHE, attempts 0), or
  // nullptr when absent or older than the TTL.
  std::shared_ptr<const DecodeResult> Lookup(const coalesce::FlightKey& key,
                                             absl::Time now);

  size_t size() const { return index_.size(); }

 private:
  struct Entry {
    coalesce::FlightKey key;
    std::shared_ptr<const DecodeResult> answer;  // already cache-flavoured
    absl::Time expires;
  };
  using List = std::list<Entry>;

  const size_t capacity_;
  const absl::Duration ttl_;
  List lru_;  // most recently used first
  absl::flat_hash_map<coalesce::FlightKey, List::iterator> index_;
};

}  // namespace engine

#endif  // VIN_ENGINE_RESULT_CACHE_H_
