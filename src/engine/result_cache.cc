#include "engine/result_cache.h"

#include <utility>

namespace engine {

ResultCache::ResultCache(size_t capacity, absl::Duration ttl)
    : capacity_(capacity), ttl_(ttl) {}

void ResultCache::Insert(const coalesce::FlightKey& key,
                         const DecodeResult& result, absl::Time now) {
  if (capacity_ == 0) return;
  auto answer = std::make_shared<DecodeResult>(result);
  answer->source = Source::kCache;
  answer->attempts = 0;
  auto it = index_.find(key);
  if (it != index_.end()) {
    lru_.erase(it->second);
    index_.erase(it);
  }
  lru_.push_front(Entry{key, std::move(answer), now + ttl_});
  index_[key] = lru_.begin();
  if (index_.size() > capacity_) {
    index_.erase(lru_.back().key);
    lru_.pop_back();
  }
}

std::shared_ptr<const DecodeResult> ResultCache::Lookup(
    const coalesce::FlightKey& key, absl::Time now) {
  auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  if (it->second->expires <= now) {
    lru_.erase(it->second);
    index_.erase(it);
    return nullptr;
  }
  lru_.splice(lru_.begin(), lru_, it->second);
  return lru_.front().answer;
}

}  // namespace engine
