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
#include "fleet/trust.h"
#include "jobs/page_token.h"
#include "vin/fleet/v1/fleet.pb.h"

namespace fleet {
namespace {

constexpr size_t kMacBytes = 32;
constexpr size_t kSecretBytes = 32;
// Items sent in one script, and items a Pending script looks at.
constexpr size_t kChunk = 1000;
constexpr int kScan = 4096;
// Bounds of what a job's hash may say.
constexpr size_t kMaxTenantBytes = 256;
constexpr size_t kMaxSpecBytes = 64 << 10;
constexpr size_t kMaxMessageBytes = 4096;
constexpr int64_t kMaxItems = int64_t{100} * 1000 * 1000;

absl::Status Unavailable(const absl::Status& s) {
  if (absl::IsUnavailable(s)) return s;
  // A Redis error reply (a script that failed, a refused command).
  return absl::Status(s.code(), absl::StrCat("job store: ", s.message()));
}

std::string TimeArg(absl::Time t) {
  return t == absl::InfinitePast() ? "" : absl::StrCat(absl::ToUnixMicros(t));
}

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

int64_t IntOf(const RedisValue& v) {
  if (v.type == RedisValue::Type::kInteger) return v.integer;
  int64_t n = 0;
  if (v.type == RedisValue::Type::kString) (void)absl::SimpleAtoi(v.str, &n);
  return n;
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

// ---- Creation ----

absl::Status RedisJobStore::BeginJob(jobs::JobRecord* job) {
  absl::StatusOr<RedisValue> n =
      redis_->Call({"INCR", absl::StrCat(options_.prefix, "jobs:seq")});
  if (!n.ok()) return Unavailable(n.status());
  job->seq = n->integer;
  job->state = jobs::JobState::kStaging;
  const bool idem = !job->idempotency_key.empty();
  const std::string idem_key =
      idem ? IdemKey(job->tenant, job->idempotency_key) : IdKey(job->id);
  absl::StatusOr<RedisValue> r =
      Script(job_scripts::kBegin, {JobKey(job->seq), IdKey(job->id), idem_key},
             {absl::StrCat(job->seq), Meta(*job),
              absl::StrCat(absl::ToInt64Milliseconds(options_.staging_ttl)),
              absl::StrCat(job->bytes), idem ? "1" : "0"});
  if (!r.ok()) return r.status();
  if (r->elements.size() == 1 && IntOf(r->elements[0]) == 1) {
    absl::MutexLock lock(&mu_);
    staging_[job->seq] = {IdKey(job->id), idem_key};
    return absl::OkStatus();
  }
  if (r->elements.size() == 2 && IntOf(r->elements[0]) == 0) {
    const int64_t prev = IntOf(r->elements[1]);
    absl::StatusOr<jobs::JobRecord> existing = LoadSeq(prev);
    if (existing.ok() && existing->tenant == job->tenant &&
        existing->idempotency_key == job->idempotency_key) {
      if (existing->state == jobs::JobState::kStaging) {
        return absl::AbortedError(
            "a job with this idempotency_key is being created right now; "
            "send again once it is");
      }
      *job = *std::move(existing);
      return absl::AlreadyExistsError(job->id);
    }
    if (!existing.ok() && !absl::IsNotFound(existing.status())) {
      return existing.status();
    }
    // The key names a job that is gone, or not this key's: it goes, and
    // the job is staged again.
    redis_->Call({"DEL", idem_key}).IgnoreError();
    return BeginJob(job);
  }
  return absl::DataLossError("job store: a reply of BeginJob's shape");
}

absl::Status RedisJobStore::AddItems(int64_t seq, int64_t first_index,
                                     const std::vector<std::string>& requests,
                                     const std::vector<std::string>& extras) {
  for (size_t at = 0; at < requests.size(); at += kChunk) {
    const size_t n = std::min(kChunk, requests.size() - at);
    std::vector<std::string> args = {
        absl::StrCat(first_index + static_cast<int64_t>(at)),
        absl::StrCat(absl::ToInt64Milliseconds(options_.staging_ttl)),
        absl::StrCat(n)};
    const std::string items_key = JobKey(seq, ":items");
    for (size_t i = at; i < at + n; ++i) {
      args.push_back(Sign(
          absl::StrCat(items_key, ":", first_index + static_cast<int64_t>(i)),
          requests[i]));
    }
    if (!extras.empty()) {
      for (size_t i = at; i < at + n; ++i) {
        args.push_back(i < extras.size() ? extras[i] : std::string());
      }
    }
    // The job's keys live on while its items arrive.
    std::pair<std::string, std::string> named;
    {
      absl::MutexLock lock(&mu_);
      auto it = staging_.find(seq);
      if (it != staging_.end()) named = it->second;
    }
    if (named.first.empty()) named = {JobKey(seq), JobKey(seq)};
    absl::StatusOr<RedisValue> r =
        Script(job_scripts::kAddItems,
               {items_key, JobKey(seq, ":extra"), JobKey(seq), named.first,
                named.second},
               std::move(args));
    if (!r.ok()) return r.status();
    if (r->integer != 1) {
      return absl::FailedPreconditionError(
          r->integer < 0 ? "job store: the job being created expired in Redis"
                         : "job store: items out of order");
    }
  }
  return absl::OkStatus();
}

absl::Status RedisJobStore::Publish(const jobs::JobRecord& job) {
  const std::string idem_key = job.idempotency_key.empty()
                                   ? IdKey(job.id)
                                   : IdemKey(job.tenant, job.idempotency_key);
  absl::StatusOr<RedisValue> r = Script(
      job_scripts::kPublish,
      {JobKey(job.seq), JobKey(job.seq, ":items"), JobKey(job.seq, ":extra"),
       IdKey(job.id), idem_key, absl::StrCat(options_.prefix, "jobs")},
      {absl::StrCat(job.seq), Meta(job), absl::StrCat(job.bytes)});
  if (!r.ok()) return r.status();
  {
    absl::MutexLock lock(&mu_);
    staging_.erase(job.seq);
  }
  if (r->integer != 1) {
    return absl::FailedPreconditionError(
        "job store: the job being created expired in Redis");
  }
  return absl::OkStatus();
}

absl::Status RedisJobStore::Drop(int64_t seq) {
  {
    absl::MutexLock lock(&mu_);
    staging_.erase(seq);
  }
  // The id and idempotency keys are named in the meta; a job whose meta
  // cannot be read loses its own keys only.
  std::string id_key = JobKey(seq, ":lease");
  std::string idem_key = id_key;
  absl::StatusOr<jobs::JobRecord> r = LoadSeq(seq);
  if (!r.ok() && absl::IsUnavailable(r.status())) return r.status();
  if (r.ok()) {
    id_key = IdKey(r->id);
    if (!r->idempotency_key.empty()) {
      idem_key = IdemKey(r->tenant, r->idempotency_key);
    }
  }
  absl::StatusOr<RedisValue> d =
      Script(job_scripts::kDrop,
             {JobKey(seq), JobKey(seq, ":items"), JobKey(seq, ":extra"),
              JobKey(seq, ":out"), JobKey(seq, ":ans"), JobKey(seq, ":lease"),
              id_key, idem_key, absl::StrCat(options_.prefix, "jobs")},
             {absl::StrCat(seq)});
  return d.status();
}

// ---- Running ----

absl::StatusOr<std::vector<jobs::PendingItem>> RedisJobStore::Pending(
    int64_t seq, int64_t from_index, int limit) {
  std::vector<jobs::PendingItem> out;
  const std::string items_key = JobKey(seq, ":items");
  int64_t from = from_index;
  while (static_cast<int>(out.size()) < limit) {
    absl::StatusOr<RedisValue> r = Script(
        job_scripts::kPending, {items_key, JobKey(seq, ":out")},
        {absl::StrCat(from), absl::StrCat(limit - static_cast<int>(out.size())),
         absl::StrCat(kScan)});
    if (!r.ok()) return r.status();
    if (r->elements.size() != 3) {
      return absl::DataLossError("job store: a reply of Pending's shape");
    }
    const RedisValue& found = r->elements[2];
    for (size_t i = 0; i + 1 < found.elements.size(); i += 2) {
      const int64_t index = IntOf(found.elements[i]);
      absl::StatusOr<std::string> item =
          Verify(absl::StrCat(items_key, ":", index), found.elements[i + 1].str,
                 absl::StrCat("job ", seq, " item ", index));
      if (!item.ok()) return item.status();
      out.push_back(jobs::PendingItem{index, *std::move(item)});
    }
    from = IntOf(r->elements[0]);
    if (IntOf(r->elements[1]) == 1) break;
  }
  return out;
}

absl::StatusOr<int64_t> RedisJobStore::MaxAnswerKey(int64_t seq) {
  absl::StatusOr<RedisValue> r = redis_->Call({"HGET", JobKey(seq), "maxans"});
  if (!r.ok()) return Unavailable(r.status());
  return IntOf(*r);
}

absl::Status RedisJobStore::Commit(const std::vector<jobs::Finish>& finishes,
                                   const std::vector<jobs::JobRecord>& records,
                                   std::vector<int64_t>* lost) {
  // One script per job: its outcomes and its record.
  std::map<int64_t, std::vector<const jobs::Finish*>> by_job;
  std::map<int64_t, const jobs::JobRecord*> record_of;
  for (const jobs::Finish& f : finishes) by_job[f.seq].push_back(&f);
  for (const jobs::JobRecord& r : records) {
    record_of[r.seq] = &r;
    by_job[r.seq];
  }
  for (const auto& [seq, fs] : by_job) {
    const jobs::JobRecord* rec =
        record_of.count(seq) != 0 ? record_of[seq] : nullptr;
    std::vector<std::string> args = {
        options_.owner,
        rec != nullptr ? "1" : "0",
        rec != nullptr ? absl::StrCat(static_cast<int>(rec->state)) : "",
        rec != nullptr ? rec->message.substr(0, kMaxMessageBytes) : "",
        rec != nullptr ? TimeArg(rec->start_time) : "",
        rec != nullptr ? TimeArg(rec->end_time) : "",
        rec != nullptr ? absl::StrCat(static_cast<int>(rec->notify)) : "",
        absl::StrCat(fs.size())};
    const std::string out_key = JobKey(seq, ":out");
    const std::string ans_key = JobKey(seq, ":ans");
    for (const jobs::Finish* f : fs) {
      const std::string value = f->outcome == jobs::Outcome::kDone
                                    ? absl::StrCat("D", f->answer_key)
                                    : absl::StrCat("F", f->failure);
      args.push_back(absl::StrCat(f->index));
      args.push_back(Sign(absl::StrCat(out_key, ":", f->index), value));
      args.push_back(absl::StrCat(f->answer_key));
      args.push_back(
          f->answer.empty()
              ? std::string()
              : Sign(absl::StrCat(ans_key, ":", f->answer_key), f->answer));
    }
    absl::StatusOr<RedisValue> r =
        Script(job_scripts::kCommit,
               {JobKey(seq), out_key, ans_key, JobKey(seq, ":lease")},
               std::move(args));
    if (!r.ok()) return r.status();
    if (r->elements.empty() || IntOf(r->elements[0]) != 1) {
      if (lost != nullptr) lost->push_back(seq);
    }
  }
  return absl::OkStatus();
}

absl::Status RedisJobStore::SaveNotify(const jobs::JobRecord& job) {
  return Script(job_scripts::kNotify, {JobKey(job.seq)},
                {absl::StrCat(static_cast<int>(job.notify))})
      .status();
}

absl::StatusOr<int64_t> RedisJobStore::FailPending(int64_t seq,
                                                   absl::string_view failure,
                                                   jobs::JobRecord* job) {
  absl::StatusOr<RedisValue> r =
      Script(job_scripts::kCancel, {JobKey(seq), JobKey(seq, ":lease")},
             {Sign(JobKey(seq, ":cancel"), std::string(failure)),
              absl::StrCat(static_cast<int>(job->state)),
              job->message.substr(0, kMaxMessageBytes), TimeArg(job->end_time),
              absl::StrCat(static_cast<int>(job->notify)),
              absl::StrCat(job->items_total), TimeArg(job->start_time)});
  if (!r.ok()) return r.status();
  const int64_t said = r->elements.empty() ? -1 : IntOf(r->elements[0]);
  if (said == 1 && r->elements.size() == 4) {
    job->items_done = IntOf(r->elements[2]);
    job->items_failed = IntOf(r->elements[3]);
    return IntOf(r->elements[1]);
  }
  // Ended meanwhile (elsewhere): what the store says stands.
  absl::StatusOr<jobs::JobRecord> stored = LoadSeq(seq);
  if (!stored.ok()) return stored.status();
  *job = *std::move(stored);
  return 0;
}

absl::StatusOr<std::vector<jobs::StoredResult>> RedisJobStore::Results(
    int64_t seq, int64_t from_index, int limit) {
  const std::string items_key = JobKey(seq, ":items");
  const std::string out_key = JobKey(seq, ":out");
  absl::StatusOr<RedisValue> r =
      Script(job_scripts::kResults,
             {items_key, out_key, JobKey(seq, ":extra"), JobKey(seq)},
             {absl::StrCat(from_index), absl::StrCat(limit)});
  if (!r.ok()) return r.status();
  if (r->elements.empty()) {
    return absl::DataLossError("job store: a reply of Results' shape");
  }
  std::string cancel;
  if (!r->elements[0].str.empty()) {
    absl::StatusOr<std::string> c =
        Verify(JobKey(seq, ":cancel"), r->elements[0].str,
               absl::StrCat("job ", seq, "'s cancel failure"));
    if (!c.ok()) return c.status();
    cancel = *std::move(c);
  }
  std::vector<jobs::StoredResult> out;
  std::vector<std::string> answer_keys;
  std::vector<bool> answered;  // out[i].bytes is an answer's key
  for (size_t i = 1; i + 2 < r->elements.size(); i += 3) {
    const int64_t index = from_index + static_cast<int64_t>(out.size());
    const std::string what = absl::StrCat("job ", seq, " item ", index);
    absl::StatusOr<std::string> item =
        Verify(absl::StrCat(items_key, ":", index), r->elements[i].str, what);
    if (!item.ok()) return item.status();
    jobs::StoredResult res;
    res.index = index;
    res.request = *std::move(item);
    res.extra = r->elements[i + 2].str;
    const std::string& o = r->elements[i + 1].str;
    if (o.empty()) {  // a cancelled job's item without an outcome
      res.outcome = jobs::Outcome::kFailed;
      res.bytes = cancel;
    } else {
      absl::StatusOr<std::string> v =
          Verify(absl::StrCat(out_key, ":", index), o,
                 absl::StrCat(what, "'s outcome"));
      if (!v.ok()) return v.status();
      if (v->empty() || ((*v)[0] != 'D' && (*v)[0] != 'F')) {
        return absl::DataLossError(
            absl::StrCat("job store: ", what, " has an outcome of no kind"));
      }
      res.outcome =
          (*v)[0] == 'D' ? jobs::Outcome::kDone : jobs::Outcome::kFailed;
      res.bytes = v->substr(1);  // the answer's key, or the failure
      if (res.outcome == jobs::Outcome::kDone) answer_keys.push_back(res.bytes);
    }
    answered.push_back(!o.empty() && res.outcome == jobs::Outcome::kDone);
    out.push_back(std::move(res));
  }
  if (answer_keys.empty()) return out;
  // The answers, each once.
  std::sort(answer_keys.begin(), answer_keys.end());
  answer_keys.erase(std::unique(answer_keys.begin(), answer_keys.end()),
                    answer_keys.end());
  const std::string ans_key = JobKey(seq, ":ans");
  std::vector<std::string> cmd = {"HMGET", ans_key};
  cmd.insert(cmd.end(), answer_keys.begin(), answer_keys.end());
  absl::StatusOr<RedisValue> answers = redis_->Call(std::move(cmd));
  if (!answers.ok()) return Unavailable(answers.status());
  absl::flat_hash_map<std::string, std::string> by_key;
  for (size_t i = 0; i < answer_keys.size(); ++i) {
    if (i >= answers->elements.size() ||
        answers->elements[i].type != RedisValue::Type::kString) {
      return absl::DataLossError(absl::StrCat(
          "job store: job ", seq, " has no answer ", answer_keys[i]));
    }
    absl::StatusOr<std::string> a = Verify(
        absl::StrCat(ans_key, ":", answer_keys[i]), answers->elements[i].str,
        absl::StrCat("job ", seq, " answer ", answer_keys[i]));
    if (!a.ok()) return a.status();
    by_key[answer_keys[i]] = *std::move(a);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (answered[i]) out[i].bytes = by_key[out[i].bytes];
  }
  return out;
}

int64_t RedisJobStore::TotalBytes() {
  absl::StatusOr<std::vector<int64_t>> seqs = IndexSeqs();
  if (!seqs.ok()) return 0;
  std::vector<std::vector<std::string>> cmds;
  for (int64_t seq : *seqs) cmds.push_back({"HGET", JobKey(seq), "bytes"});
  int64_t total = 0;
  for (const RedisCaller::Reply& r : redis_->CallAll(std::move(cmds))) {
    if (r.ok()) total += std::max<int64_t>(0, IntOf(*r));
  }
  return total;
}

// ---- Leases ----

absl::StatusOr<bool> RedisJobStore::Hold(int64_t seq, absl::Duration ttl) {
  absl::StatusOr<RedisValue> r = Script(
      job_scripts::kHold, {JobKey(seq, ":lease")},
      {options_.owner,
       absl::StrCat(std::max<int64_t>(1, absl::ToInt64Milliseconds(ttl)))});
  if (!r.ok()) return r.status();
  return r->integer == 1;
}

void RedisJobStore::Release(int64_t seq) {
  // Only this owner's lease goes (the fleet's release script).
  Script(scripts::kRelease, {JobKey(seq, ":lease")}, {options_.owner})
      .status()
      .IgnoreError();
}

}  // namespace fleet
