// The store of finished decodes behind the in-memory LRU (DESIGN rule 14:
// nothing learned is lost on a restart): an embedded SQLite file in WAL mode,
// written by a writer thread of its own through a bounded queue.
//
// Values are opaque bytes (the caller's serialized cache answer), keyed by
// (key, model_year): a VIN, or a vPIC reference request (rule 18). The store is bounded by Options::max_bytes (oldest
// decode_time first out) and by Options::keep_for (rows decoded longer ago
// are neither served nor kept).
//
// Durability: journal_mode=WAL, synchronous=NORMAL. A commit survives a
// crash of the process (SIGKILL included): the file is never left half
// written, a row is there whole or not at all, and every transaction
// committed before the kill is there at the next Open. An OS crash or power
// loss may lose the last transactions (those not yet checkpointed into the
// file with an fsync) but never leaves the file damaged. A Put is committed
// at most about Options::commit_interval after it was queued, so a crash of
// the process loses at most that much work still queued.
//
// Thread safety: every method may be called from any thread, concurrently
// (the destructor excepted: nothing may run concurrently with it). Put and
// Discard never block on I/O nor on the writer (they take a short lock on
// the queue); Get and ForEachNewest read SQLite on the calling thread, on a
// read connection leased from a pool, and never wait for the writer;
// MayContain and stats() touch memory only.
//
// Locks: `queue_mu_` (the queue and the stop flag) and `ids_mu_` (the id
// set) are leaves: neither is held while taking the other, nor while SQLite
// runs, nor while calling `warn`.
#ifndef VIN_DISK_CACHE_DISK_CACHE_H_
#define VIN_DISK_CACHE_DISK_CACHE_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "clocks/clock.h"
#include "disk_cache/row.h"

namespace disk_cache {

class ReaderPool;
class StoreWriter;
struct WriteChanges;

struct Options {
  // The store's file (--cache_path); its directory is created if missing.
  std::string path;
  // Bound on the summed size of the rows (value + VIN + 64 bytes each);
  // when over, the rows of oldest decode_time are deleted until under. The
  // file itself is larger by SQLite's page slack and index.
  uint64_t max_bytes = 2ull << 30;
  // Puts waiting for the writer; a Put beyond it is dropped and counted.
  size_t queue_capacity = 8192;
  // A transaction is committed at most this long after the first Put it
  // holds was queued, or sooner, once `batch_rows` Puts are waiting.
  absl::Duration commit_interval = absl::Milliseconds(250);
  size_t batch_rows = 256;
  // Rows whose decode_time is older are not served, not stored, and
  // deleted by the writer (at Open, then about once a minute): the stale
  // maximum of DESIGN rule 15.
  absl::Duration keep_for = absl::Hours(24 * 30);
  // WallNow() decides keep_for and stamps stored_at; the real clock when
  // null. Not owned; must outlive the cache.
  const clocks::Clock* clock = nullptr;
};

class DiskCache {
 public:
  // An operator's warning: one sentence naming the file and what happened.
  using Warn = std::function<void(const std::string&)>;

  // Opens or creates the store at options.path and starts its writer. A
  // file that is not a store of this schema (not SQLite, truncated or
  // damaged, failing `PRAGMA quick_check`, another program's database, a
  // newer or older schema version) is renamed aside to
  // `<path>.broken-<UTC time>` (its -wal too), named in one `warn`, and
  // replaced by an empty store: Open succeeds. It fails only when no store
  // can be had at the path (the directory or the file cannot be created, the
  // file cannot be moved, another process holds it locked, an I/O error),
  // with a status naming the path. `warn` may be empty; it is called on
  // Open's thread during Open, afterwards on the writer thread (a
  // transaction failed: once, until one succeeds again); it must not call
  // back into the cache. `quick_check` reads the whole file: Open takes
  // about as long as reading it.
  static absl::StatusOr<std::unique_ptr<DiskCache>> Open(Options options,
                                                         Warn warn);

  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;
  // Close(), then closes the read connections.
  ~DiskCache();

  // Queues `row` for the writer, which stores it (replacing the key's row
  // unless that one was decoded later). Dropped and counted when the queue
  // is full or the cache closed; not stored, and counted as expired, when
  // already older than keep_for.
  void Put(Row row);

  // The stored row of the key, or nullopt: absent, decoded longer ago than
  // keep_for, or not intact (a column of the wrong type, or a value that
  // does not match its checksum: then discarded as by Discard). A row the
  // writer has not committed yet is not seen.
  absl::optional<Row> Get(const std::string& key, int model_year);

  // False when the store surely does not hold the key: an in-memory set of
  // the stored row ids, loaded at Open and updated as transactions commit,
  // so that a caller skips Get (a SQLite read) for keys never stored. True
  // may still be a miss (a row being expired or replaced, a 64-bit id shared
  // by two keys).
  bool MayContain(const std::string& key, int model_year) const;

  // Calls `fn` with the rows decoded within keep_for, newest decode_time
  // first, at most `limit`, until `fn` returns false (for warming the LRU at
  // start). Rows that are not intact are skipped and discarded. `fn` runs
  // on this thread while the read is open; it may call the cache.
  void ForEachNewest(size_t limit, const std::function<bool(Row)>& fn);

  // The caller could not parse this key's value: MayContain and Get stop
  // answering it at once, and the writer deletes its row (counted as
  // corrupt). Never dropped, even with the queue full.
  void Discard(const std::string& key, int model_year);

  // Commits everything queued, then stops the writer (the SIGTERM path);
  // Puts after it are dropped. Idempotent. If another process holds the
  // store locked, gives up after a few seconds, dropping what is queued.
  // Get and ForEachNewest still read afterwards.
  void Close();

  struct Stats {
    uint64_t entries = 0;    // rows in the store (committed)
    uint64_t bytes = 0;      // their summed size, as max_bytes counts it
    uint64_t queued = 0;     // Puts and Discards waiting for the writer
    uint64_t committed = 0;  // Puts done (stored, or a later decode was)
    uint64_t dropped = 0;    // Puts lost: queue full, closed, write failed,
                             // or one row larger than max_bytes
    uint64_t corrupt = 0;    // rows deleted as unparseable or not intact
    uint64_t evicted = 0;    // rows deleted to fit max_bytes
    uint64_t expired = 0;    // rows deleted or Puts refused past keep_for
  };
  // Any thread. Each counter is read atomically; together they are not
  // one snapshot (a caller that sees `committed` reach n also sees the
  // other counters of those commits).
  Stats stats() const;

 private:
  DiskCache(Options options, Warn warn);
  // Opens the file, fills the id set and the totals, purges and evicts.
  absl::Status Load();
  void WriterLoop();
  // Commits `batch` (and the purge, when due), retrying while another
  // connection holds the lock, until a while after Close asked to stop.
  void Commit(std::vector<WriteOp> batch, bool purge);
  void Publish(const WriteChanges& changes);
  // Queues `op`; a Put is dropped when the queue is full (`may_drop`).
  void Enqueue(WriteOp op, bool may_drop);
  void DiscardId(int64_t id);
  bool HasId(int64_t id) const;
  absl::Time KeepAfter() const;

  const Options options_;
  const clocks::Clock* const clock_;
  const Warn warn_;
  std::unique_ptr<ReaderPool> readers_;
  std::unique_ptr<StoreWriter> writer_;  // Open, then the writer thread only
  absl::Time last_purge_;                // the writer thread only
  bool write_failing_ = false;           // the writer thread only

  // Serialises Close; held while joining the writer, and while Close takes
  // queue_mu_ to stop it.
  absl::Mutex close_mu_ ABSL_ACQUIRED_BEFORE(queue_mu_);
  std::thread thread_ ABSL_GUARDED_BY(close_mu_);

  mutable absl::Mutex queue_mu_;
  std::deque<WriteOp> queue_ ABSL_GUARDED_BY(queue_mu_);
  size_t queued_puts_ ABSL_GUARDED_BY(queue_mu_) = 0;   // Discards not counted
  absl::Time first_queued_ ABSL_GUARDED_BY(queue_mu_);  // absl::Now()
  bool stop_ ABSL_GUARDED_BY(queue_mu_) = false;

  mutable absl::Mutex ids_mu_;
  absl::flat_hash_set<int64_t> ids_ ABSL_GUARDED_BY(ids_mu_);

  std::atomic<uint64_t> entries_{0}, bytes_{0}, queued_{0}, committed_{0},
      dropped_{0}, corrupt_{0}, evicted_{0}, expired_{0};
};

}  // namespace disk_cache

#endif  // VIN_DISK_CACHE_DISK_CACHE_H_
