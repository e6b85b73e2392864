// RedisJobStore's running half (redis_job_store.h): pending items,
// outcomes committed under the lease, a cancel, results listed, leases.
#include <algorithm>
#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "fleet/redis_fleet_scripts.h"
#include "fleet/redis_job_scripts.h"
#include "fleet/redis_job_store.h"
#include "fleet/redis_job_values.h"

namespace fleet {
namespace {

using job_values::IntOf;
using job_values::kMaxMessageBytes;
using job_values::TimeArg;
using job_values::Unavailable;

// Items a Pending script looks at.
constexpr int kScan = 4096;

}  // namespace

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
