#include "engine/result_cache.h"

#include <utility>

#include "absl/hash/hash.h"

namespace engine {
namespace {

// Whether `answer` is a cache answer with bytes: by DecodeResult's contract
// its vehicle and notes are then only in the bytes, so that the bytes, the
// VIN and the decode time make it again.
bool OnlyBytes(const DecodeResult& answer) {
  return answer.encoded != nullptr && answer.source == Source::kCache;
}

}  // namespace

ResultCache::ResultCache(size_t capacity, absl::Duration ttl,
                         ResultEncoder encoder)
    : capacity_(capacity),
      shards_used_(capacity < 1024 ? 1 : kShards),
      shard_capacity_((capacity + shards_used_ - 1) / shards_used_),
      ttl_(ttl),
      encoder_(std::move(encoder)) {}

ResultCache::Shard& ResultCache::ShardOf(const coalesce::FlightKey& key) {
  return shards_[absl::HashOf(key) % shards_used_];
}

std::shared_ptr<const DecodeResult> ResultCache::Insert(
    const coalesce::FlightKey& key, const DecodeResult& result,
    absl::Time now) {
  auto answer = std::make_shared<DecodeResult>(result);
  answer->source = Source::kCache;
  answer->attempts = 0;
  if (encoder_) {
    // Encoded once, as the cache answer; the expanded vehicle is dropped.
    answer->encoded = std::make_shared<const std::string>(encoder_(*answer));
    answer->vehicle = vpic::Vehicle();
    answer->notes.clear();
    answer->notes.shrink_to_fit();
  }
  InsertAnswer(key, answer, now);
  return answer;
}

void ResultCache::InsertAnswer(const coalesce::FlightKey& key,
                               std::shared_ptr<const DecodeResult> answer,
                               absl::Time now) {
  if (capacity_ == 0) return;
  Shard& shard = ShardOf(key);
  absl::MutexLock lock(&shard.mu);
  auto it = shard.index.find(key);
  if (it != shard.index.end()) {
    shard.lru.erase(it->second);
    shard.index.erase(it);
  }
  Entry entry{key, nullptr, absl::Time(), nullptr, now + ttl_};
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
  absl::MutexLock lock(&shard.mu);
  auto it = shard.index.find(key);
  if (it == shard.index.end()) return nullptr;
  if (it->second->expires <= now) {
    shard.lru.erase(it->second);
    shard.index.erase(it);
    return nullptr;
  }
  shard.lru.splice(shard.lru.begin(), shard.lru, it->second);
  return AnswerOf(shard.lru.front());
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
