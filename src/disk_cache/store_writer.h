// The store's one writing connection: every change to the file, each batch
// in one transaction, and the totals eviction is decided on. Internal to
// disk_cache.
//
// Not thread-safe: used by DiskCache::Open, then by the writer thread only.
#ifndef VIN_DISK_CACHE_STORE_WRITER_H_
#define VIN_DISK_CACHE_STORE_WRITER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "disk_cache/row.h"
#include "disk_cache/sqlite_util.h"

namespace disk_cache {

struct WriteLimits {
  absl::Time now;         // stored_at of the rows written
  absl::Time keep_after;  // rows decoded before this are expired
  bool purge = false;     // also delete the stored rows that are expired
  uint64_t max_bytes = 0;
};

// What a committed transaction did.
struct WriteChanges {
  // Row ids stored (true) or deleted (false), in the order it happened.
  std::vector<std::pair<int64_t, bool>> ids;
  uint64_t committed = 0;  // Puts done: stored, or older than the stored row
  uint64_t evicted = 0;    // deleted, oldest first, to fit max_bytes
  uint64_t expired = 0;    // Puts not stored, or rows deleted: past keep_after
  uint64_t corrupt = 0;    // rows deleted by a Discard
  uint64_t dropped = 0;    // Puts not stored: larger than max_bytes alone
};

class StoreWriter {
 public:
  // Prepares the statements on `db` (a store OpenStoreFile returned).
  static absl::StatusOr<std::unique_ptr<StoreWriter>> Create(Connection db);

  // Calls `fn` with every row id and sets entries() and bytes() from the
  // rows (a scan of the covering age index, not of the values).
  absl::Status Scan(const std::function<void(int64_t)>& fn);

  // In one transaction: `ops` in order (a Put replaces the row of its id
  // unless that row is of the same key and decoded later; a Discard deletes
  // the row of its id), then the purge if asked, then the oldest rows while
  // bytes() > max_bytes. On an error the transaction is rolled back and
  // nothing changed; UNAVAILABLE means another connection holds the lock.
  absl::StatusOr<WriteChanges> Apply(const std::vector<WriteOp>& ops,
                                     const WriteLimits& limits);

  uint64_t entries() const { return entries_; }
  uint64_t bytes() const { return bytes_; }  // summed RowBytes

 private:
  struct Totals {
    uint64_t entries = 0;
    uint64_t bytes = 0;
    void Remove(int64_t row_bytes);
  };
  explicit StoreWriter(Connection db) : db_(std::move(db)) {}
  absl::Status ApplyInTransaction(const std::vector<WriteOp>& ops,
                                  const WriteLimits& limits,
                                  WriteChanges* changes, Totals* totals);
  absl::Status Put(const WriteOp& op, const WriteLimits& limits,
                   WriteChanges* changes, Totals* totals);
  // Runs `stmt` to the end, calling `row` for each result row; resets it.
  absl::Status Run(sqlite3_stmt* stmt,
                   const std::function<void(sqlite3_stmt*)>& row = {});

  Connection db_;
  Statement begin_, commit_, find_, upsert_, remove_, expire_, evict_, scan_;
  uint64_t entries_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace disk_cache

#endif  // VIN_DISK_CACHE_STORE_WRITER_H_
