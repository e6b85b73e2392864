#include "disk_cache/disk_cache.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "disk_cache/reader_pool.h"
#include "disk_cache/row_key.h"
#include "disk_cache/store_file.h"
#include "disk_cache/store_writer.h"

namespace disk_cache {
namespace {

// How often the writer deletes rows past keep_for (and wakes when idle).
constexpr absl::Duration kPurgeEvery = absl::Minutes(1);
// A transaction takes at most this many batches of queued changes.
constexpr size_t kMaxBatches = 4;
// After Close, how long the writer keeps trying a store another process
// holds locked before it drops what is queued.
constexpr absl::Duration kCloseGiveUp = absl::Seconds(5);

}  // namespace

DiskCache::DiskCache(Options options, Warn warn)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock
                                       : clocks::Clock::Real()),
      warn_(std::move(warn)) {}

DiskCache::~DiskCache() { Close(); }

absl::StatusOr<std::unique_ptr<DiskCache>> DiskCache::Open(Options options,
                                                           Warn warn) {
  if (options.path.empty()) {
    return absl::InvalidArgumentError("disk cache: no path given");
  }
  if (options.batch_rows == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("disk cache ", options.path, ": batch_rows is 0"));
  }
  std::unique_ptr<DiskCache> cache(
      new DiskCache(std::move(options), std::move(warn)));
  absl::Status s = cache->Load();
  if (!s.ok()) return s;
  absl::MutexLock lock(&cache->close_mu_);
  cache->thread_ = std::thread([c = cache.get()] { c->WriterLoop(); });
  return cache;
}

absl::Status DiskCache::Load() {
  const std::string& path = options_.path;
  for (int attempt = 0;; ++attempt) {
    absl::Status s;
    {
      absl::StatusOr<Connection> db =
          OpenStoreFile(path, warn_, clock_->WallNow());
      if (!db.ok()) return db.status();
      absl::StatusOr<std::unique_ptr<StoreWriter>> writer =
          StoreWriter::Create(std::move(*db));
      s = writer.status();
      absl::flat_hash_set<int64_t> ids;
      if (s.ok()) s = (*writer)->Scan([&ids](int64_t id) { ids.insert(id); });
      absl::StatusOr<WriteChanges> changes;
      const absl::Time now = clock_->WallNow();
      if (s.ok()) {
        // Rows past keep_for, and over max_bytes if it was lowered.
        changes = (*writer)->Apply(
            {}, WriteLimits{now, KeepAfter(), true, options_.max_bytes});
        s = changes.status();
      }
      if (s.ok()) {
        writer_ = std::move(*writer);
        {
          absl::MutexLock lock(&ids_mu_);
          ids_ = std::move(ids);
        }
        Publish(*changes);
        last_purge_ = now;
        readers_ = std::make_unique<ReaderPool>(path);
        return absl::OkStatus();
      }
    }  // the connection is closed here
    // Damage quick_check does not look for (a bad index entry, say): set
    // the file aside once and start again.
    if (!absl::IsDataLoss(s) || attempt > 0) {
      return absl::Status(s.code(),
                          absl::StrCat("disk cache ", path, ": ", s.message()));
    }
    absl::StatusOr<std::string> aside = SetAside(
        path, absl::StrCat("is a damaged SQLite database (", s.message(), ")"),
        warn_, clock_->WallNow());
    if (!aside.ok()) return aside.status();
  }
}

absl::Time DiskCache::KeepAfter() const {
  return clock_->WallNow() - options_.keep_for;
}

bool DiskCache::HasId(int64_t id) const {
  absl::ReaderMutexLock lock(&ids_mu_);
  return ids_.contains(id);
}

bool DiskCache::MayContain(const std::string& key, int model_year) const {
  return HasId(KeyId(key, model_year));
}

void DiskCache::Enqueue(WriteOp op, bool may_drop) {
  absl::MutexLock lock(&queue_mu_);
  const bool put = op.kind == WriteOp::kPut;
  if (stop_ || (may_drop && queued_puts_ >= options_.queue_capacity)) {
    if (put) dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (queue_.empty()) first_queued_ = absl::Now();
  if (put) ++queued_puts_;
  queue_.push_back(std::move(op));
  queued_.store(queue_.size(), std::memory_order_relaxed);
}

void DiskCache::Put(Row row) {
  WriteOp op;
  op.kind = WriteOp::kPut;
  op.id = KeyId(row.key, row.model_year);
  op.row = std::move(row);
  Enqueue(std::move(op), /*may_drop=*/true);
}

void DiskCache::DiscardId(int64_t id) {
  {
    absl::MutexLock lock(&ids_mu_);
    ids_.erase(id);
  }
  WriteOp op;
  op.kind = WriteOp::kDiscard;
  op.id = id;
  Enqueue(std::move(op), /*may_drop=*/false);
}

void DiskCache::Discard(const std::string& key, int model_year) {
  DiscardId(KeyId(key, model_year));
}

absl::optional<Row> DiskCache::Get(const std::string& key, int model_year) {
  const int64_t id = KeyId(key, model_year);
  if (!HasId(id)) return absl::nullopt;
  absl::StatusOr<absl::optional<StoredRow>> read = readers_->Read(id);
  if (!read.ok() || !read->has_value()) return absl::nullopt;
  StoredRow& stored = **read;
  if (!stored.intact) {
    DiscardId(id);
    return absl::nullopt;
  }
  if (stored.row.key != key || stored.row.model_year != model_year ||
      stored.row.decode_time < KeepAfter()) {
    return absl::nullopt;
  }
  return std::move(stored.row);
}

void DiskCache::ForEachNewest(size_t limit,
                              const std::function<bool(Row)>& fn) {
  // A failed read ends the walk early: the LRU is warmed with less.
  readers_
      ->ForEachNewest(limit, KeepAfter(),
                      [&](StoredRow stored) {
                        if (!stored.intact) {
                          DiscardId(stored.id);
                          return true;
                        }
                        if (!HasId(stored.id)) return true;  // discarded
                        return fn(std::move(stored.row));
                      })
      .IgnoreError();
}

void DiskCache::Close() {
  absl::MutexLock lock(&close_mu_);
  {
    absl::MutexLock q(&queue_mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void DiskCache::WriterLoop() {
  const size_t max_batch = options_.batch_rows * kMaxBatches;
  for (;;) {
    std::vector<WriteOp> batch;
    bool done;
    {
      absl::MutexLock lock(&queue_mu_);
      auto work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(queue_mu_) {
        return stop_ || !queue_.empty();
      };
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(queue_mu_) {
        return stop_ || queue_.size() >= options_.batch_rows;
      };
      queue_mu_.AwaitWithTimeout(absl::Condition(&work), kPurgeEvery);
      if (!queue_.empty()) {
        queue_mu_.AwaitWithDeadline(absl::Condition(&ready),
                                    first_queued_ + options_.commit_interval);
      }
      // What stays queued keeps its first_queued_: overdue, so next.
      const size_t n = std::min(queue_.size(), max_batch);
      batch.reserve(n);
      for (size_t i = 0; i < n; ++i) {
        if (queue_.front().kind == WriteOp::kPut) --queued_puts_;
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      queued_.store(queue_.size(), std::memory_order_relaxed);
      done = stop_ && queue_.empty();
    }
    const bool purge = clock_->WallNow() - last_purge_ >= kPurgeEvery;
    if (!batch.empty() || purge) Commit(std::move(batch), purge);
    if (done) return;
  }
}

void DiskCache::Commit(std::vector<WriteOp> batch, bool purge) {
  absl::optional<absl::Time> give_up;
  for (;;) {
    const WriteLimits limits{clock_->WallNow(), KeepAfter(), purge,
                             options_.max_bytes};
    absl::StatusOr<WriteChanges> changes = writer_->Apply(batch, limits);
    if (purge) last_purge_ = limits.now;
    if (changes.ok()) {
      Publish(*changes);
      write_failing_ = false;
      return;
    }
    const bool busy = absl::IsUnavailable(changes.status());
    if (busy) {
      bool stopping;
      {
        absl::MutexLock lock(&queue_mu_);
        stopping = stop_;
      }
      if (stopping && !give_up) give_up = absl::Now() + kCloseGiveUp;
      if (!give_up || absl::Now() < *give_up) {
        if (!write_failing_ && warn_) {
          warn_(absl::StrCat("disk cache ", options_.path,
                             " is locked by another connection (",
                             changes.status().message(), "); ", batch.size(),
                             " changes wait for it"));
        }
        write_failing_ = true;
        continue;  // SQLite's busy timeout paced this attempt
      }
    }
    const uint64_t puts = static_cast<uint64_t>(std::count_if(
        batch.begin(), batch.end(),
        [](const WriteOp& op) { return op.kind == WriteOp::kPut; }));
    dropped_.fetch_add(puts, std::memory_order_relaxed);
    if (!write_failing_ && warn_) {
      warn_(absl::StrCat("disk cache ", options_.path,
                         ": a transaction failed (", changes.status().message(),
                         "); its ", puts, " rows are dropped"));
    }
    write_failing_ = true;
    return;
  }
}

void DiskCache::Publish(const WriteChanges& changes) {
  if (!changes.ids.empty()) {
    absl::MutexLock lock(&ids_mu_);
    for (const auto& [id, stored] : changes.ids) {
      if (stored) {
        ids_.insert(id);
      } else {
        ids_.erase(id);
      }
    }
  }
  entries_.store(writer_->entries(), std::memory_order_relaxed);
  bytes_.store(writer_->bytes(), std::memory_order_relaxed);
  evicted_.fetch_add(changes.evicted, std::memory_order_relaxed);
  expired_.fetch_add(changes.expired, std::memory_order_relaxed);
  corrupt_.fetch_add(changes.corrupt, std::memory_order_relaxed);
  dropped_.fetch_add(changes.dropped, std::memory_order_relaxed);
  // Last, so that a caller who sees a Put committed also sees its effects.
  committed_.fetch_add(changes.committed, std::memory_order_release);
}

DiskCache::Stats DiskCache::stats() const {
  Stats s;
  s.committed = committed_.load(std::memory_order_acquire);
  s.entries = entries_.load(std::memory_order_relaxed);
  s.bytes = bytes_.load(std::memory_order_relaxed);
  s.queued = queued_.load(std::memory_order_relaxed);
  s.dropped = dropped_.load(std::memory_order_relaxed);
  s.corrupt = corrupt_.load(std::memory_order_relaxed);
  s.evicted = evicted_.load(std::memory_order_relaxed);
  s.expired = expired_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace disk_cache
