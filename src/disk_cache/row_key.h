// How a row is keyed, checked and sized in the store. Internal to
// disk_cache; pure functions.
#ifndef VIN_DISK_CACHE_ROW_KEY_H_
#define VIN_DISK_CACHE_ROW_KEY_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace disk_cache {

// The row id of (key, model_year): a 64-bit hash (FNV-1a, then
// splitmix64's finaliser), the same in every process and build, since it is
// stored. It is the table's INTEGER PRIMARY KEY, so that a point read is one
// B-tree search on the table itself and the in-memory "may contain" set is
// exactly the set of row ids. Two keys with the same id share one row (the
// later Put replaces the earlier); the row keeps its key and model_year, so
// a read never returns another key's row.
int64_t KeyId(absl::string_view key, int model_year);

// CRC-32 (zlib's) of a value, stored beside it: a row whose value no longer
// matches is never served.
uint32_t Checksum(absl::string_view value);

// What a row counts toward Options::max_bytes: its value and VIN plus a
// fixed allowance for the other columns, the row's cell and its entry in the
// age index.
inline constexpr uint64_t kRowOverhead = 64;
inline uint64_t RowBytes(absl::string_view key, absl::string_view value) {
  return key.size() + value.size() + kRowOverhead;
}

}  // namespace disk_cache

#endif  // VIN_DISK_CACHE_ROW_KEY_H_
