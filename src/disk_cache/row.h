// A finished decode as the store keeps it, and a change queued for the
// store's writer.
#ifndef VIN_DISK_CACHE_ROW_H_
#define VIN_DISK_CACHE_ROW_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"

namespace disk_cache {

// Keyed by (key, model_year), as the engine's flight table and LRU are: the
// key is a VIN (model_year 0: no hint) or a vPIC reference request (rule
// 18; domain::DecodeKey::reference, model_year 0). `value` is opaque bytes (the caller's serialized
// cache answer); `decode_time` is when vPIC answered (calendar time), which
// orders eviction and decides keep_for.
struct Row {
  std::string key;
  int model_year = 0;
  std::string value;
  absl::Time decode_time;
};

// What DiskCache queues for its writer (internal).
struct WriteOp {
  enum Kind { kPut, kDiscard };
  Kind kind = kPut;
  int64_t id = 0;  // KeyId of the row's key
  Row row;         // kPut only
};

}  // namespace disk_cache

#endif  // VIN_DISK_CACHE_ROW_H_
