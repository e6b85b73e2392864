// The cache of finished decodes (DESIGN rules 8, 14 and 15): LRU with a
// time-to-live. Failures are never stored.
//
// Freshness and staleness (rule 15): an entry answers Lookup while younger
// than the TTL; older, it is kept up to `stale_max` for LookupStale (the
// answer the engine gives only when the live path has failed for good).
//
// The disk layer (rule 14, optional): every decode inserted is also put in
// a disk_cache::DiskCache (its writer thread commits it; never blocking); a
// Lookup the memory cannot answer reads the disk when it may hold the key,
// checks the row with the decoder (a row that does not parse is discarded
// and counted there, never answered) and keeps it in memory with its age.
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

#include <algorithm>
#include <array>
#include <functional>
#include <list>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "coalesce/flight_table.h"
#include "engine_api/types.h"
#include "retry/clock.h"

namespace disk_cache {
class DiskCache;
struct Row;
}

namespace engine {

// The bytes callers are sent for a result (the server's wire encoding).
using ResultEncoder = std::function<std::string(const DecodeResult&)>;
// The other way: a result from its bytes; false when they do not parse.
using ResultDecoder = std::function<bool(const std::string&, DecodeResult*)>;
// The bytes of a live result as a cache answer (source CACHE, attempts 0),
// made from the encoder's bytes of it without expanding them: what the
// encoder makes of the cache answer. Nullopt when they do not parse.
using CacheAnswerRecoder =
    std::function<absl::optional<std::string>(const std::string& live)>;

struct ResultCacheOptions {
  size_t capacity = 0;  // 0 disables the cache
  absl::Duration ttl = absl::Hours(24);
  // Rule 18: how long a reference answer (GetAllMakes, ...) is fresh.
  absl::Duration reference_ttl = absl::Hours(24);
  absl::Duration stale_max = absl::ZeroDuration();  // kept this long in all
  ResultEncoder encoder;  // may be empty: entries keep the whole result
  ResultDecoder decoder;  // checks the disk's rows; needed with `disk`
  disk_cache::DiskCache* disk = nullptr;  // not owned; may be null
  const retry::Clock* clock = nullptr;    // wall time of disk rows
  // With the encoder: a live result inserted with its bytes becomes a cache
  // answer through this, not through a copy and a second encoding. May be
  // empty.
  CacheAnswerRecoder as_cache_answer;
};

class ResultCache {
 public:
  explicit ResultCache(ResultCacheOptions options);
  // capacity 0 disables the cache. `encoder` may be empty: entries then keep
  // the whole result.
  ResultCache(size_t capacity, absl::Duration ttl, ResultEncoder encoder = {});

  // Stores `result` (a live vPIC decode) for `key`, evicting the least
  // recently used entry of its shard when full. Returns the cache answer
  // it made (also when the cache is disabled).
  std::shared_ptr<const DecodeResult> Insert(const coalesce::FlightKey& key,
                                             const DecodeResult& result,
                                             absl::Time now);
  // Stores a cache answer made elsewhere (another replica's, or the
  // disk's), `age` old.
  void InsertAnswer(const coalesce::FlightKey& key,
                    std::shared_ptr<const DecodeResult> answer, absl::Time now,
                    absl::Duration age = absl::ZeroDuration());
  // The stored result as a cache answer (source CACHE, attempts 0), or
  // nullptr when absent or older than the TTL.
  std::shared_ptr<const DecodeResult> Lookup(const coalesce::FlightKey& key,
                                             absl::Time now);
  // An entry older than the TTL but within stale_max, and its age.
  struct Stale {
    std::shared_ptr<const DecodeResult> answer;
    absl::Duration age;
  };
  absl::optional<Stale> LookupStale(const coalesce::FlightKey& key,
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
    absl::Time born;     // when it was decoded, on the monotonic clock
    absl::Time expires;  // born + ttl
    absl::Time kept_until;  // born + max(ttl, stale_max)
  };
  // The disk's row for `key` as a cache answer kept in memory, if any.
  std::shared_ptr<const DecodeResult> LookupDisk(const coalesce::FlightKey& key,
                                                 absl::Time now);
  // The TTL of `key`'s entries, and how long they are kept in all.
  absl::Duration TtlOf(const coalesce::FlightKey& key) const {
    return key.is_reference() ? reference_ttl_ : ttl_;
  }
  absl::Duration KeepOf(const coalesce::FlightKey& key) const {
    return std::max(TtlOf(key), stale_max_);
  }
  // The disk's row for `key` as an answer (a decode's bytes read back with
  // the decoder, a reference document checked), or nullptr when it does
  // not read back.
  std::shared_ptr<const DecodeResult> AnswerOfRow(
      const coalesce::FlightKey& key, disk_cache::Row row) const;
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
  const absl::Duration reference_ttl_;
  const absl::Duration stale_max_;
  const ResultEncoder encoder_;
  const ResultDecoder decoder_;
  const CacheAnswerRecoder as_cache_answer_;
  disk_cache::DiskCache* const disk_;
  const retry::Clock* const clock_;
  std::array<Shard, kShards> shards_;
};

}  // namespace engine

#endif  // VIN_ENGINE_RESULT_CACHE_H_
