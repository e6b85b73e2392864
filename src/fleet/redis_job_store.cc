#include "fleet/redis_job_store.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <algorithm>
#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "fleet/redis_fleet_scripts.h"
#include "fleet/redis_job_scripts.h"
#include "fleet/redis_job_values.h"
#include "fleet/trust.h"
#include "jobs/page_token.h"
#include "vin/fleet/v1/fleet.pb.h"

namespace fleet {
namespace {

using job_values::IntOf;
using job_values::kMaxMessageBytes;
using job_values::TimeArg;
using job_values::Unavailable;

constexpr size_t kMacBytes = 32;
constexpr size_t kSecretBytes = 32;
// Bounds of what a job's hash may say.
constexpr size_t kMaxTenantBytes = 256;
constexpr size_t kMaxSpecBytes = 64 << 10;
constexpr int64_t kMaxItems = int64_t{100} * 1000 * 1000;

// An integer field; `ok` false when it is not one within [lo, hi].
int64_t IntField(const std::string& v, int64_t lo, int64_t hi, bool* ok) {
  int64_t n = 0;
  if (v.empty()) return lo;
  if (!absl::SimpleAtoi(v, &n) || n < lo || n > hi) *ok = false;
  return n;
}

absl::Time TimeField(const std::string& v, bool* ok) {
  if (v.empty()) return absl::InfinitePast();
  int64_t us = 0;
  if (!absl::SimpleAtoi(v, &us)) {
    *ok = false;
    return absl::InfinitePast();
  }
  return absl::FromUnixMicros(us);
}

void ToTimestamp(absl::Time t, google::protobuf::Timestamp* ts) {
  const int64_t us = absl::ToUnixMicros(t);
  ts->set_seconds(us / 1000000);
  ts->set_nanos(static_cast<int32_t>((us % 1000000) * 1000));
}
absl::Time FromTimestamp(const google::protobuf::Timestamp& ts) {
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

}  // namespace

RedisJobStore::RedisJobStore(std::unique_ptr<RedisCaller> redis,
                             RedisJobStoreOptions options)
    : redis_(std::move(redis)), options_(std::move(options)) {}

absl::Time RedisJobStore::WallNow() const {
  return options_.wall_clock ? options_.wall_clock() : absl::Now();
}

std::string RedisJobStore::JobKey(int64_t seq, const char* part) const {
  return absl::StrCat(options_.prefix, "job:", seq, part);
}
std::string RedisJobStore::IdKey(const std::string& id) const {
  return absl::StrCat(options_.prefix, "jobs:id:", id);
}
std::string RedisJobStore::IdemKey(const std::string& tenant,
                                   const std::string& key) const {
  const std::string both = absl::StrCat(tenant, "\n", key);
  unsigned char d[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(both.data()), both.size(), d);
  return absl::StrCat(
      options_.prefix, "jobs:idem:",
      absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(d),
                                               SHA256_DIGEST_LENGTH)));
}

std::string RedisJobStore::Sign(const std::string& key,
                                std::string value) const {
  if (options_.secret == nullptr) return value;
  const std::string mac = options_.secret->Mac(key, 0, value);
  value += mac;
  return value;
}

absl::StatusOr<std::string> RedisJobStore::Verify(
    const std::string& key, const std::string& value,
    const std::string& what) const {
  if (value.size() > kMaxValueBytes) {
    return absl::DataLossError(
        absl::StrCat(what, " is larger than ", kMaxValueBytes, " bytes"));
  }
  if (options_.secret == nullptr) return value;
  if (value.size() < kMacBytes) {
    return absl::DataLossError(
        absl::StrCat(what, " carries no signature: not written by this fleet"));
  }
  const std::string body = value.substr(0, value.size() - kMacBytes);
  const std::string mac = options_.secret->Mac(key, 0, body);
  if (mac.size() != kMacBytes ||
      CRYPTO_memcmp(mac.data(), value.data() + body.size(), kMacBytes) != 0) {
    return absl::DataLossError(absl::StrCat(
        what, "'s signature does not match: not written by this fleet"));
  }
  return body;
}

absl::StatusOr<RedisValue> RedisJobStore::Script(
    const char* script, std::vector<std::string> keys,
    std::vector<std::string> args) {
  std::vector<std::string> argv = {"EVAL", script, absl::StrCat(keys.size())};
  argv.reserve(3 + keys.size() + args.size());
  for (std::string& k : keys) argv.push_back(std::move(k));
  for (std::string& a : args) argv.push_back(std::move(a));
  absl::StatusOr<RedisValue> r = redis_->Call(std::move(argv));
  if (!r.ok()) return Unavailable(r.status());
  return r;
}

std::string RedisJobStore::DurabilityWarning() {
  absl::StatusOr<RedisValue> r = redis_->Call({"CONFIG", "GET", "appendonly"});
  if (!r.ok()) {
    return absl::StrCat(
        "jobs live in Redis (--redis_url), whose appendonly setting could "
        "not be read (",
        r.status().message(),
        "): jobs are as durable as Redis's persistence; run Redis with "
        "appendonly yes (README \"Running a fleet\")");
  }
  if (r->elements.size() == 2 && r->elements[1].str == "yes") return "";
  return "jobs live in Redis (--redis_url), which runs without appendonly "
         "yes: a restart of Redis loses the jobs written since its last "
         "snapshot; run Redis with appendonly yes (README \"Running a "
         "fleet\")";
}

absl::StatusOr<std::string> RedisJobStore::Secret() {
  absl::MutexLock lock(&mu_);
  if (!secret_.empty()) return secret_;
  const std::string key = absl::StrCat(options_.prefix, "jobs:secret");
  std::string fresh(kSecretBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(&fresh[0]),
                 static_cast<int>(kSecretBytes)) != 1) {
    return absl::InternalError("job store: no random bytes for its secret");
  }
  // The first replica's secret stays; the others read it.
  std::vector<RedisCaller::Reply> r =
      redis_->CallAll({{"SET", key, Sign(key, fresh), "NX"}, {"GET", key}});
  if (!r[1].ok()) return Unavailable(r[1].status());
  absl::StatusOr<std::string> stored = Verify(key, r[1]->str, key);
  if (!stored.ok() || stored->size() != kSecretBytes) {
    return absl::DataLossError(absl::StrCat(
        "job store: ", key,
        " is not a page-token secret written by this fleet; delete it "
        "(page tokens issued before stop working)"));
  }
  secret_ = *std::move(stored);
  return secret_;
}

// ---- Records ----

std::string RedisJobStore::Meta(const jobs::JobRecord& job) const {
  vin::fleet::v1::StoredJob m;
  m.set_seq(job.seq);
  m.set_id(job.id);
  m.set_tenant(job.tenant);
  m.set_idempotency_key(job.idempotency_key);
  m.set_spec(job.spec);
  m.set_columns(job.columns);
  m.set_items_total(job.items_total);
  ToTimestamp(job.create_time, m.mutable_create_time());
  if (job.not_before != absl::InfinitePast()) {
    ToTimestamp(job.not_before, m.mutable_not_before());
  }
  m.set_off_peak(job.off_peak);
  return Seal(m.SerializeAsString(), JobKey(job.seq), job.create_time,
              options_.secret.get());
}

absl::StatusOr<jobs::JobRecord> RedisJobStore::RecordOf(
    int64_t seq, const RedisValue& fields) const {
  absl::flat_hash_map<std::string, std::string> f;
  for (size_t i = 0; i + 1 < fields.elements.size(); i += 2) {
    f[fields.elements[i].str] = fields.elements[i + 1].str;
  }
  const std::string key = JobKey(seq);
  auto bad = [&key](const std::string& why) {
    return absl::DataLossError(absl::StrCat("job store: ", key, " ", why));
  };
  if (f.empty()) return absl::NotFoundError(absl::StrCat("no job ", seq));
  absl::StatusOr<Opened> opened = OpenSeal(f["meta"]);
  if (!opened.ok() || !opened->sealed) return bad("has no sealed meta");
  if (opened->key != key) return bad("holds another job's meta");
  if (options_.secret != nullptr &&
      !MacMatches(*opened, key, *options_.secret)) {
    return bad("has a meta not signed by this fleet");
  }
  vin::fleet::v1::StoredJob m;
  if (!m.ParseFromArray(opened->payload.data(),
                        static_cast<int>(opened->payload.size())) ||
      m.seq() != seq || !jobs::IsJobIdShaped(m.id()) ||
      m.tenant().size() > kMaxTenantBytes || m.spec().size() > kMaxSpecBytes ||
      m.items_total() < 0 || m.items_total() > kMaxItems) {
    return bad("has a meta that is not a job's");
  }
  jobs::JobRecord r;
  r.seq = seq;
  r.id = m.id();
  r.tenant = m.tenant();
  r.idempotency_key = m.idempotency_key();
  r.spec = m.spec();
  r.columns = m.columns();
  r.items_total = m.items_total();
  r.create_time = FromTimestamp(m.create_time());
  if (m.has_not_before()) r.not_before = FromTimestamp(m.not_before());
  r.off_peak = m.off_peak();
  bool ok = true;
  r.state = static_cast<jobs::JobState>(IntField(f["state"], 0, 5, &ok));
  r.items_done = IntField(f["done"], 0, r.items_total, &ok);
  r.items_failed = IntField(f["failed"], 0, r.items_total, &ok);
  r.bytes = IntField(f["bytes"], 0, INT64_MAX, &ok);
  r.notify = static_cast<jobs::NotifyState>(IntField(f["notify"], 0, 3, &ok));
  r.start_time = TimeField(f["start"], &ok);
  r.end_time = TimeField(f["end"], &ok);
  r.message = f["message"];
  if (!ok || r.items_finished() > r.items_total ||
      r.message.size() > kMaxMessageBytes) {
    return bad("has counts, times or a state out of bounds");
  }
  return r;
}

absl::StatusOr<std::vector<int64_t>> RedisJobStore::IndexSeqs() {
  absl::StatusOr<RedisValue> r = redis_->Call(
      {"ZRANGE", absl::StrCat(options_.prefix, "jobs"), "0", "-1"});
  if (!r.ok()) return Unavailable(r.status());
  std::vector<int64_t> seqs;
  for (const RedisValue& v : r->elements) {
    int64_t seq = 0;
    if (absl::SimpleAtoi(v.str, &seq) && seq > 0) seqs.push_back(seq);
  }
  return seqs;
}

absl::StatusOr<std::vector<jobs::JobRecord>> RedisJobStore::LoadJobs() {
  absl::StatusOr<std::vector<int64_t>> seqs = IndexSeqs();
  if (!seqs.ok()) return seqs.status();
  // Settled jobs (ended, their end told or nothing to tell) never change:
  // they are not read again, only looked for in the index.
  absl::flat_hash_map<int64_t, jobs::JobRecord> settled;
  {
    absl::MutexLock lock(&mu_);
    for (int64_t seq : *seqs) {
      auto it = settled_.find(seq);
      if (it != settled_.end()) settled.emplace(seq, it->second);
    }
    settled_ = settled;  // those gone from the index are forgotten
  }
  std::vector<int64_t> read;
  std::vector<std::vector<std::string>> cmds;
  for (int64_t seq : *seqs) {
    if (settled.contains(seq)) continue;
    read.push_back(seq);
    cmds.push_back({"HGETALL", JobKey(seq)});
  }
  std::vector<RedisCaller::Reply> replies = redis_->CallAll(std::move(cmds));
  absl::flat_hash_map<int64_t, jobs::JobRecord> fresh;
  for (size_t i = 0; i < replies.size(); ++i) {
    if (!replies[i].ok()) return Unavailable(replies[i].status());
    absl::StatusOr<jobs::JobRecord> r = RecordOf(read[i], *replies[i]);
    if (!r.ok()) {
      if (!absl::IsNotFound(r.status()) && options_.warn) {
        options_.warn(std::string(r.status().message()));
      }
      continue;
    }
    if (r->state != jobs::JobState::kStaging)
      fresh.emplace(read[i], *std::move(r));
  }
  std::vector<jobs::JobRecord> out;
  absl::MutexLock lock(&mu_);
  for (int64_t seq : *seqs) {
    auto s = settled.find(seq);
    if (s != settled.end()) {
      out.push_back(s->second);
      continue;
    }
    auto f = fresh.find(seq);
    if (f == fresh.end()) continue;
    if (jobs::IsTerminal(f->second.state) &&
        f->second.notify != jobs::NotifyState::kDue) {
      settled_.emplace(seq, f->second);
    }
    out.push_back(std::move(f->second));
  }
  return out;
}

absl::StatusOr<jobs::JobRecord> RedisJobStore::LoadSeq(int64_t seq) {
  absl::StatusOr<RedisValue> r = redis_->Call({"HGETALL", JobKey(seq)});
  if (!r.ok()) return Unavailable(r.status());
  return RecordOf(seq, *r);
}

absl::StatusOr<jobs::JobRecord> RedisJobStore::LoadJob(const std::string& id) {
  if (!jobs::IsJobIdShaped(id)) {
    return absl::NotFoundError(absl::StrCat("no job ", id));
  }
  absl::StatusOr<RedisValue> r = redis_->Call({"GET", IdKey(id)});
  if (!r.ok()) return Unavailable(r.status());
  int64_t seq = 0;
  if (r->type != RedisValue::Type::kString || !absl::SimpleAtoi(r->str, &seq)) {
    return absl::NotFoundError(absl::StrCat("no job ", id));
  }
  absl::StatusOr<jobs::JobRecord> rec = LoadSeq(seq);
  // The id key names a job: that job's meta must name the id back.
  if (!rec.ok() || rec->id != id || rec->state == jobs::JobState::kStaging) {
    return absl::NotFoundError(absl::StrCat("no job ", id));
  }
  return rec;
}

}  // namespace fleet
