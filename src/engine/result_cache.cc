#include "engine/result_cache.h"

#include <algorithm>
#include <utility>

#include "absl/hash/hash.h"
#include "disk_cache/disk_cache.h"
#include "vpic/reference.h"

namespace engine {
namespace {

// Whether `answer` is a cache answer with bytes: by DecodeResult's contract
// its vehicle and notes are then only in the bytes, so that the bytes, the
// VIN and the decode time make it again.
bool OnlyBytes(const DecodeResult& answer) {
  return answer.encoded != nullptr && answer.source == Source::kCache;
}

}  // namespace

ResultCache::ResultCache(ResultCacheOptions o)
    : capacity_(o.capacity),
      shards_used_(o.capacity < 1024 ? 1 : kShards),
      shard_capacity_((o.capacity + shards_used_ - 1) / shards_used_),
      ttl_(o.ttl),
      reference_ttl_(o.reference_ttl),
      stale_max_(o.stale_max),
      encoder_(std::move(o.encoder)),
      decoder_(std::move(o.decoder)),
      as_cache_answer_(std::move(o.as_cache_answer)),
      disk_(o.capacity > 0 && decoder_ ? o.disk : nullptr),
      clock_(o.clock != nullptr ? o.clock : retry::Clock::Real()) {}

namespace {
ResultCacheOptions MemoryOnly(size_t capacity, absl::Duration ttl,
                              ResultEncoder encoder) {
  ResultCacheOptions o;
  o.capacity = capacity;
  o.ttl = ttl;
  o.encoder = std::move(encoder);
  return o;
}
}  // namespace

ResultCache::ResultCache(size_t capacity, absl::Duration ttl,
                         ResultEncoder encoder)
    : ResultCache(MemoryOnly(capacity, ttl, std::move(encoder))) {}

ResultCache::Shard& ResultCache::ShardOf(const coalesce::FlightKey& key) {
  return shards_[absl::HashOf(key) % shards_used_];
}

std::shared_ptr<const DecodeResult> ResultCache::Insert(
    const coalesce::FlightKey& key, const DecodeResult& result,
    absl::Time now) {
  // With the encoder, encoded once as the cache answer, which keeps only
  // those bytes: made from the live result's bytes when it has them (no
  // copy of the vehicle), else from a copy of the result.
  if (key.is_reference()) {
    // A reference answer is its document, kept whole and stored as is.
    auto answer = std::make_shared<DecodeResult>(result);
    answer->source = Source::kCache;
    answer->attempts = 0;
    InsertAnswer(key, answer, now);
    if (disk_ != nullptr && result.document != nullptr) {
      disk_->Put({key.reference, 0, *result.document, result.decode_time});
    }
    return answer;
  }
  absl::optional<std::string> bytes;
  if (encoder_ && as_cache_answer_ && result.encoded != nullptr) {
    bytes = as_cache_answer_(*result.encoded);
  }
  std::shared_ptr<DecodeResult> answer;
  if (bytes) {
    answer = std::make_shared<DecodeResult>();
    answer->vin = result.vin;
    answer->decode_time = result.decode_time;
  } else {
    answer = std::make_shared<DecodeResult>(result);
  }
  answer->source = Source::kCache;
  answer->attempts = 0;
  if (encoder_) {
    if (!bytes) bytes = encoder_(*answer);
    answer->encoded = std::make_shared<const std::string>(std::move(*bytes));
    answer->vehicle = vpic::Vehicle();
    answer->notes.clear();
    answer->notes.shrink_to_fit();
  }
  InsertAnswer(key, answer, now);
  if (disk_ != nullptr && answer->encoded != nullptr) {
    disk_->Put({key.vin, key.model_year, *answer->encoded, result.decode_time});
  }
  return answer;
}

void ResultCache::InsertAnswer(const coalesce::FlightKey& key,
                               std::shared_ptr<const DecodeResult> answer,
                               absl::Time now, absl::Duration age) {
  if (capacity_ == 0) return;
  Shard& shard = ShardOf(key);
  absl::MutexLock lock(&shard.mu);
  auto it = shard.index.find(key);
  if (it != shard.index.end()) {
    shard.lru.erase(it->second);
    shard.index.erase(it);
  }
  const absl::Time born = now - age;
  Entry entry;
  entry.key = key;
  entry.born = born;
  entry.expires = born + TtlOf(key);
  entry.kept_until = born + KeepOf(key);
  if (OnlyBytes(*answer) && answer->vin == key.vin) {
    entry.encoded = answer->encoded;
    entry.decode_time = answer->decode_time;
  } else {
    entry.answer = std::move(answer);
  }
  shard.lru.push_front(std::move(entry));
  shard.index[key] = shard.lru.begin();
  if (shard.index.size() > shard_capacity_) {
    shard.index.erase(shard.lru.back().key);
    shard.lru.pop_back();
  }
}

std::shared_ptr<const DecodeResult> ResultCache::Lookup(
    const coalesce::FlightKey& key, absl::Time now) {
  if (capacity_ == 0) return nullptr;
  Shard& shard = ShardOf(key);
  {
    absl::MutexLock lock(&shard.mu);
    auto it = shard.index.find(key);
    if (it != shard.index.end()) {
      if (it->second->kept_until <= now) {
        shard.lru.erase(it->second);
        shard.index.erase(it);
      } else if (it->second->expires <= now) {
        return nullptr;  // stale: kept for LookupStale, not a hit
      } else {
        shard.lru.splice(shard.lru.begin(), shard.lru, it->second);
        return AnswerOf(shard.lru.front());
      }
    }
  }
  if (disk_ == nullptr || !disk_->MayContain(key.text(), key.model_year)) {
    return nullptr;
  }
  return LookupDisk(key, now);
}

std::shared_ptr<const DecodeResult> ResultCache::LookupDisk(
    const coalesce::FlightKey& key, absl::Time now) {
  absl::optional<disk_cache::Row> row = disk_->Get(key.text(), key.model_year);
  if (!row) return nullptr;
  const absl::Time decode_time = row->decode_time;
  std::shared_ptr<const DecodeResult> answer =
      AnswerOfRow(key, *std::move(row));
  if (answer == nullptr) {
    disk_->Discard(key.text(), key.model_year);  // never answered
    return nullptr;
  }
  const absl::Duration age =
      std::max(absl::ZeroDuration(), clock_->WallNow() - decode_time);
  if (age >= KeepOf(key)) return nullptr;
  InsertAnswer(key, answer, now, age);
  if (age >= TtlOf(key)) return nullptr;  // stale: for LookupStale only
  return answer;
}

std::shared_ptr<const DecodeResult> ResultCache::AnswerOfRow(
    const coalesce::FlightKey& key, disk_cache::Row row) const {
  auto answer = std::make_shared<DecodeResult>();
  answer->source = Source::kCache;
  answer->decode_time = row.decode_time;
  if (key.is_reference()) {
    if (!vpic::CheckReferenceDocument(row.value).ok()) return nullptr;
    answer->document =
        std::make_shared<const std::string>(std::move(row.value));
    return answer;
  }
  DecodeResult parsed;
  if (!decoder_(row.value, &parsed) || parsed.vin != key.vin) return nullptr;
  answer->vin = key.vin;
  answer->encoded = std::make_shared<const std::string>(std::move(row.value));
  return answer;
}

absl::optional<ResultCache::Stale> ResultCache::LookupStale(
    const coalesce::FlightKey& key, absl::Time now) {
  if (capacity_ == 0) return absl::nullopt;
  Shard& shard = ShardOf(key);
  absl::MutexLock lock(&shard.mu);
  auto it = shard.index.find(key);
  if (it == shard.index.end() || it->second->kept_until <= now) {
    return absl::nullopt;
  }
  return Stale{AnswerOf(*it->second), now - it->second->born};
}

std::shared_ptr<const DecodeResult> ResultCache::AnswerOf(const Entry& entry) {
  if (entry.answer != nullptr) return entry.answer;
  auto answer = std::make_shared<DecodeResult>();
  answer->vin = entry.key.vin;
  answer->source = Source::kCache;
  answer->decode_time = entry.decode_time;
  answer->encoded = entry.encoded;
  return answer;
}

size_t ResultCache::size() const {
  size_t n = 0;
  for (const Shard& s : shards_) {
    absl::MutexLock lock(&s.mu);
    n += s.index.size();
  }
  return n;
}

}  // namespace engine
