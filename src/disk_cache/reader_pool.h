// Point reads and the newest-first walk, on read connections of their own.
// Internal to disk_cache.
//
// Thread-safe. A caller leases a connection from the pool for one read and
// gives it back; when none is idle it opens another, so the pool grows to the
// number of threads that read at once and keeps them until it is destroyed.
// In WAL mode a reader never waits for the writer, nor the writer for it.
#ifndef VIN_DISK_CACHE_READER_POOL_H_
#define VIN_DISK_CACHE_READER_POOL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "disk_cache/row.h"
#include "disk_cache/sqlite_util.h"

namespace disk_cache {

// A row as read. `intact`: every column has the type the writer gives it,
// the value's checksum matches and the key is the one of the row id; a row
// that is not must not be served.
struct StoredRow {
  int64_t id = 0;
  Row row;
  bool intact = false;
};

class ReaderPool {
 public:
  explicit ReaderPool(std::string path) : path_(std::move(path)) {}
  ReaderPool(const ReaderPool&) = delete;
  ReaderPool& operator=(const ReaderPool&) = delete;

  // The row stored under `id`, if any.
  absl::StatusOr<absl::optional<StoredRow>> Read(int64_t id);

  // Rows decoded at or after `since`, newest first, at most `limit`, each
  // given to `fn` (from this thread, while the read is open) until it
  // returns false.
  absl::Status ForEachNewest(size_t limit, absl::Time since,
                             const std::function<bool(StoredRow)>& fn);

 private:
  struct Reader {
    Connection db;
    Statement read;
    Statement newest;
  };
  absl::StatusOr<std::unique_ptr<Reader>> Lease();
  void Return(std::unique_ptr<Reader> reader);

  const std::string path_;
  absl::Mutex mu_;  // guards idle_ only; never held during a read
  std::vector<std::unique_ptr<Reader>> idle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace disk_cache

#endif  // VIN_DISK_CACHE_READER_POOL_H_
