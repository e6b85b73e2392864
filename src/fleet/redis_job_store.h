// Bulk jobs of a fleet, in Redis (DESIGN rule 20, `--redis_url`): any
// replica answers for any job, one replica at a time works a job (its
// lease, renewed by its worker), and a replica that dies leaves it to
// another within the lease time.
//
// Keys (P: the fleet's prefix): P"jobs" (a sorted set of published jobs'
// seqs), P"jobs:seq" (the counter), P"jobs:secret" (the page tokens'
// secret), P"jobs:id:<id>" and P"jobs:idem:<sha256 of tenant and key>"
// (each the seq of its job), and per job P"job:<seq>" (a hash: the sealed
// StoredJob and the fields that change), ":items" (a list), ":extra",
// ":out" (outcomes by index), ":ans" (answers by key), ":lease".
// A staging job's keys expire (an upload whose replica died), published
// ones do not. Every script checks what it changes (redis_job_scripts.cc):
// only the lease's owner commits outcomes to a job not ended, and an
// outcome, once there, stays.
//
// Nothing read is believed unchecked (fleet/trust.h's rule): the meta is
// sealed for its key (signed with the fleet's secret when there is one);
// items, outcomes, answers and the cancel failure carry, with the secret,
// an HMAC for their own key and index, so that a value moved or forged is
// refused (DATA_LOSS naming it); counts and states are bounded. A job whose
// hash fails its checks is left out of LoadJobs, with a warning.
//
// Thread-safe (RedisCaller is; the secret is kept behind a mutex).
#ifndef VIN_FLEET_REDIS_JOB_STORE_H_
#define VIN_FLEET_REDIS_JOB_STORE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "fleet/redis_caller.h"
#include "fleet/seal.h"
#include "jobs/job_store.h"

namespace fleet {

struct RedisJobStoreOptions {
  std::string prefix = "vin:";
  std::shared_ptr<const FleetSecret> secret;  // null: values unsigned
  // This process's name in leases (unique in the fleet).
  std::string owner;
  // How long a job's keys live while its items arrive (renewed by each
  // chunk).
  absl::Duration staging_ttl = absl::Hours(1);
  std::function<void(const std::string&)> warn;
  std::function<absl::Time()> wall_clock;  // null: the real one
};

class RedisJobStore final : public jobs::JobStore {
 public:
  RedisJobStore(std::unique_ptr<RedisCaller> redis,
                RedisJobStoreOptions options);

  // Whether Redis keeps what it is told across its restart (CONFIG GET
  // appendonly): a warning's text when it does not or cannot say, "" when
  // it does.
  std::string DurabilityWarning();

  absl::StatusOr<std::string> Secret() override;
  bool shared() const override { return true; }
  absl::StatusOr<std::vector<jobs::JobRecord>> LoadJobs() override;
  absl::StatusOr<jobs::JobRecord> LoadJob(const std::string& id) override;
  absl::Status BeginJob(jobs::JobRecord* job) override;
  absl::Status AddItems(int64_t seq, int64_t first_index,
                        const std::vector<std::string>& requests,
                        const std::vector<std::string>& extras) override;
  absl::Status Publish(const jobs::JobRecord& job) override;
  absl::Status Drop(int64_t seq) override;
  absl::StatusOr<std::vector<jobs::PendingItem>> Pending(int64_t seq,
                                                         int64_t from_index,
                                                         int limit) override;
  absl::StatusOr<int64_t> MaxAnswerKey(int64_t seq) override;
  absl::Status Commit(const std::vector<jobs::Finish>& finishes,
                      const std::vector<jobs::JobRecord>& jobs,
                      std::vector<int64_t>* lost = nullptr) override;
  absl::Status SaveNotify(const jobs::JobRecord& job) override;
  absl::StatusOr<int64_t> FailPending(int64_t seq, absl::string_view failure,
                                      jobs::JobRecord* job) override;
  absl::StatusOr<std::vector<jobs::StoredResult>> Results(int64_t seq,
                                                          int64_t from_index,
                                                          int limit) override;
  int64_t TotalBytes() override;
  absl::StatusOr<bool> Hold(int64_t seq, absl::Duration ttl) override;
  void Release(int64_t seq) override;

  // The key of job `seq`'s hash, and of one of its parts (":items"...).
  std::string JobKey(int64_t seq, const char* part = "") const;

 private:
  absl::Time WallNow() const;
  std::string IdKey(const std::string& id) const;
  std::string IdemKey(const std::string& tenant, const std::string& key) const;
  // `value` with, given the fleet's secret, its HMAC for `key` appended.
  std::string Sign(const std::string& key, std::string value) const;
  // The value without its HMAC; DATA_LOSS naming `what` when the HMAC is
  // missing or wrong.
  absl::StatusOr<std::string> Verify(const std::string& key,
                                     const std::string& value,
                                     const std::string& what) const;
  std::string Meta(const jobs::JobRecord& job) const;
  // Job `seq`'s record from its hash's fields (HGETALL's reply), checked.
  absl::StatusOr<jobs::JobRecord> RecordOf(int64_t seq,
                                           const RedisValue& fields) const;
  absl::StatusOr<jobs::JobRecord> LoadSeq(int64_t seq);
  absl::StatusOr<std::vector<int64_t>> IndexSeqs();
  absl::StatusOr<RedisValue> Script(const char* script,
                                    std::vector<std::string> keys,
                                    std::vector<std::string> args);

  const std::unique_ptr<RedisCaller> redis_;
  const RedisJobStoreOptions options_;
  absl::Mutex mu_;
  std::string secret_ ABSL_GUARDED_BY(mu_);  // "" until read
  // Jobs ended whose end is told (or has nothing to tell): as read once.
  absl::flat_hash_map<int64_t, jobs::JobRecord> settled_ ABSL_GUARDED_BY(mu_);
  // Jobs this process is creating: their id and idempotency keys, whose
  // TTLs each chunk of items renews.
  absl::flat_hash_map<int64_t, std::pair<std::string, std::string>> staging_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace fleet

#endif  // VIN_FLEET_REDIS_JOB_STORE_H_
