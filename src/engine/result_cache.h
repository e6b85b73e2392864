// The cache of finished decodes (DESIGN rule 8): LRU with a time-to-live.
// Failures are never stored.
//
// Thread-safe, and read concurrently: a cache hit is answered on the
// caller's thread without a hop through the engine's loop. A cache of 1024
// entries or more is split over 16 shards, each an LRU of its own behind its
// own mutex, so that readers on gRPC's threads and the loop's inserts rarely
// meet (eviction is then least recently used within a shard); a smaller
// one is one exact LRU.
//
// With an encoder, an entry keeps only the wire bytes of its answer and its
// decode time, not the expanded vehicle nor a DecodeResult around them
// (~1.5 KB a VIN instead of ~6 KB); Lookup builds the cache answer around
// the bytes.
#ifndef VIN_ENGINE_RESULT_CACHE_H_
#define VIN_ENGINE_RESULT_CACHE_H_

#include <array>
#include <functional>
#include <list>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coalesce/flight_table.h"
#include "engine/types.h"

namespace engine {

// The bytes callers are sent for a result (the server's wire encoding).
using ResultEncoder = std::function<std::string(const DecodeResult&)>;

class ResultCache {
 public:
  // capacity 0 disables the cache. `encoder` may be empty: entries then keep
  // the whole result.
  ResultCache(size_t capacity, absl::Duration ttl, ResultEncoder encoder = {});

  // Stores `result` (a live vPIC decode) for `key`, evicting the least
  // recently used entry of its shard when full. Returns the cache answer
  // it made (also when the cache is disabled).
  std::shared_ptr<const DecodeResult> Insert(const coalesce::FlightKey& key,
                                             const DecodeResult& result,
                                             absl::Time now);
  // Stores a cache answer made elsewhere (another replica's).
  void InsertAnswer(const coalesce::FlightKey& key,
                    std::shared_ptr<const DecodeResult> answer, absl::Time now);
  // The stored result as a cache answer (source CACHE, attempts 0), or
  // nullptr when absent or older than the TTL.
  std::shared_ptr<const DecodeResult> Lookup(const coalesce::FlightKey& key,
                                             absl::Time now);

  size_t size() const;
  bool enabled() const { return capacity_ > 0; }

 private:
  static constexpr size_t kShards = 16;
  struct Entry {
    coalesce::FlightKey key;
    // An answer that is only bytes (see OnlyBytes) keeps just these two...
    std::shared_ptr<const std::string> encoded;
    absl::Time decode_time;
    // ...any other, the whole answer (already cache-flavoured).
    std::shared_ptr<const DecodeResult> answer;
    absl::Time expires;
  };
  // The cache answer an entry stands for.
  static std::shared_ptr<const DecodeResult> AnswerOf(const Entry& entry);
  using List = std::list<Entry>;
  struct Shard {
    mutable absl::Mutex mu;
    List lru ABSL_GUARDED_BY(mu);  // most recently used first
    absl::flat_hash_map<coalesce::FlightKey, List::iterator> index
        ABSL_GUARDED_BY(mu);
  };
  Shard& ShardOf(const coalesce::FlightKey& key);

  const size_t capacity_;
  const size_t shards_used_;
  const size_t shard_capacity_;
  const absl::Duration ttl_;
  const ResultEncoder encoder_;
  std::array<Shard, kShards> shards_;
};

}  // namespace engine

#endif  // VIN_ENGINE_RESULT_CACHE_H_
