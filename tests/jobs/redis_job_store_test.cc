// A fleet's job store in a real redis-server (DESIGN rule 20): two stores
// on one Redis stand for two replicas. Jobs one creates the other reads;
// only the lease's holder commits, and an outcome never changes; a cancel
// on either ends the job; an idempotency key is the fleet's; values a
// client of Redis forged or moved are refused; Redis that does not answer
// is UNAVAILABLE, never a job only one replica knows.
#include "fleet/redis_job_store.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "jobs/page_token.h"
#include "testing/eventually.h"
#include "testing/redis_server.h"
#include "testing/temp_dir.h"

namespace {

using fleet::RedisCaller;
using fleet::RedisJobStore;
using jobs::Finish;
using jobs::JobRecord;
using jobs::JobState;
using jobs::Outcome;

class RedisJobStoreTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(redis_.Start(&error)) << error;
    raw_ = Caller();
  }

  std::unique_ptr<RedisCaller> Caller() {
    fleet::RedisAddress a;
    a.host = "127.0.0.1";
    a.port = redis_.port();
    auto c = RedisCaller::Start(a, nullptr, absl::Seconds(1));
    EXPECT_TRUE(c.ok()) << c.status();
    return *std::move(c);
  }

  // A replica's store; signed with `secret` when given.
  std::unique_ptr<RedisJobStore> Store(const std::string& owner,
                                       const std::string& secret = "") {
    fleet::RedisJobStoreOptions o;
    o.owner = owner;
    o.warn = [this](const std::string& w) { warnings_.push_back(w); };
    if (!secret.empty()) {
      auto s = fleet::FleetSecret::Create(secret);
      EXPECT_TRUE(s.ok());
      o.secret = *s;
    }
    return std::make_unique<RedisJobStore>(Caller(), std::move(o));
  }

  // A published job of `items` items ("item<i>") on `store`.
  JobRecord NewJob(RedisJobStore* store, int items,
                   const std::string& idempotency_key = "") {
    JobRecord j;
    j.id = jobs::NewJobId();
    j.tenant = "t";
    j.spec = "spec";
    j.idempotency_key = idempotency_key;
    j.create_time = absl::FromUnixSeconds(1800000000);
    EXPECT_TRUE(store->BeginJob(&j).ok());
    std::vector<std::string> rows;
    for (int i = 0; i < items; ++i) rows.push_back(absl::StrCat("item", i));
    EXPECT_TRUE(store->AddItems(j.seq, 0, rows, {}).ok());
    j.items_total = items;
    j.state = JobState::kPending;
    EXPECT_TRUE(store->Publish(j).ok());
    return j;
  }

  std::string Raw(std::vector<std::string> argv) {
    auto r = raw_->Call(std::move(argv));
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->str : "";
  }

  testing_util::RedisServer redis_;
  std::unique_ptr<RedisCaller> raw_;
  std::vector<std::string> warnings_;
};

TEST_F(RedisJobStoreTest,
       AJobOneReplicaCreatesTheOtherReadsAndOnlyTheHolderCommits) {
  auto a = Store("replica-a");
  auto b = Store("replica-b");
  JobRecord j = NewJob(a.get(), 5);

  // B finds it, by id and among all jobs.
  auto found = b->LoadJob(j.id);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->seq, j.seq);
  EXPECT_EQ(found->items_total, 5);
  EXPECT_EQ(found->state, JobState::kPending);
  auto all = b->LoadJobs();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].id, j.id);
  EXPECT_TRUE(absl::IsNotFound(b->LoadJob(jobs::NewJobId()).status()));
  EXPECT_TRUE(absl::IsNotFound(b->LoadJob("not-an-id").status()));

  // A holds it; B cannot take it, and B's outcomes are not stored.
  ASSERT_TRUE(*a->Hold(j.seq, absl::Seconds(30)));
  EXPECT_FALSE(*b->Hold(j.seq, absl::Seconds(30)));
  std::vector<int64_t> lost;
  ASSERT_TRUE(
      b->Commit({Finish{j.seq, 0, Outcome::kFailed, 0, "", "b's"}}, {}, &lost)
          .ok());
  EXPECT_EQ(lost, std::vector<int64_t>{j.seq});

  j.state = JobState::kRunning;
  lost.clear();
  ASSERT_TRUE(a->Commit({Finish{j.seq, 0, Outcome::kDone, 1, "answer-1", ""},
                         Finish{j.seq, 2, Outcome::kDone, 1, "", ""},
                         Finish{j.seq, 3, Outcome::kFailed, 0, "", "failure"}},
                        {j}, &lost)
                  .ok());
  EXPECT_TRUE(lost.empty());
  // An outcome, once there, stays.
  ASSERT_TRUE(
      a->Commit({Finish{j.seq, 0, Outcome::kFailed, 0, "", "late"}}, {}).ok());

  // B reads the results in order, up to the first unfinished item.
  auto results = b->Results(j.seq, 0, 10);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 1u);
  EXPECT_EQ((*results)[0].request, "item0");
  EXPECT_EQ((*results)[0].outcome, Outcome::kDone);
  EXPECT_EQ((*results)[0].bytes, "answer-1");
  auto later = b->Results(j.seq, 2, 10);
  ASSERT_TRUE(later.ok());
  ASSERT_EQ(later->size(), 2u);
  EXPECT_EQ((*later)[0].bytes, "answer-1");  // the same answer, stored once
  EXPECT_EQ((*later)[1].outcome, Outcome::kFailed);
  EXPECT_EQ((*later)[1].bytes, "failure");
  auto record = b->LoadJob(j.id);
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(record->items_done, 2);
  EXPECT_EQ(record->items_failed, 1);
  EXPECT_EQ(record->state, JobState::kRunning);
  EXPECT_EQ(*b->MaxAnswerKey(j.seq), 1);

  // What is left to run, for whoever takes the job over.
  auto pending = b->Pending(j.seq, 0, 10);
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 2u);
  EXPECT_EQ((*pending)[0].index, 1);
  EXPECT_EQ((*pending)[1].index, 4);
  EXPECT_EQ((*pending)[1].request, "item4");

  // A gives it up: B takes it.
  a->Release(j.seq);
  EXPECT_TRUE(*b->Hold(j.seq, absl::Seconds(30)));
  EXPECT_FALSE(*a->Hold(j.seq, absl::Seconds(30)));
}

TEST_F(RedisJobStoreTest, PendingItemsAreFoundPastLongRunsOfFinishedOnes) {
  auto a = Store("replica-a");
  JobRecord j = NewJob(a.get(), 10000);
  ASSERT_TRUE(*a->Hold(j.seq, absl::Seconds(30)));
  std::vector<Finish> done;
  for (int i = 0; i < 9990; ++i) {
    done.push_back(Finish{j.seq, i, Outcome::kDone, 1, i == 0 ? "a" : "", ""});
  }
  ASSERT_TRUE(a->Commit(done, {}).ok());
  auto pending = a->Pending(j.seq, 0, 256);
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 10u);
  EXPECT_EQ((*pending)[0].index, 9990);
  EXPECT_EQ(pending->back().index, 9999);
}

TEST_F(RedisJobStoreTest, ACancelOnAnyReplicaEndsTheJobAndItsHolderStops) {
  auto a = Store("replica-a");
  auto b = Store("replica-b");
  JobRecord j = NewJob(a.get(), 4);
  ASSERT_TRUE(*a->Hold(j.seq, absl::Seconds(30)));
  ASSERT_TRUE(
      a->Commit({Finish{j.seq, 0, Outcome::kDone, 1, "answer", ""}}, {}).ok());

  JobRecord cancel = *b->LoadJob(j.id);
  cancel.state = JobState::kCancelled;
  cancel.message = "cancelled by its caller";
  cancel.end_time = absl::FromUnixSeconds(1800000100);
  auto failed = b->FailPending(j.seq, "cancelled", &cancel);
  ASSERT_TRUE(failed.ok()) << failed.status();
  EXPECT_EQ(*failed, 3);
  EXPECT_EQ(cancel.items_done, 1);
  EXPECT_EQ(cancel.items_failed, 3);

  // The holder's later outcomes are refused: the job ended.
  std::vector<int64_t> lost;
  ASSERT_TRUE(
      a->Commit({Finish{j.seq, 1, Outcome::kDone, 1, "", ""}}, {}, &lost).ok());
  EXPECT_EQ(lost, std::vector<int64_t>{j.seq});
  // Every item is listed: the unfinished ones as cancelled.
  auto results = a->Results(j.seq, 0, 10);
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->size(), 4u);
  EXPECT_EQ((*results)[0].bytes, "answer");
  for (int i = 1; i < 4; ++i) {
    EXPECT_EQ((*results)[i].outcome, Outcome::kFailed);
    EXPECT_EQ((*results)[i].bytes, "cancelled");
  }
  EXPECT_EQ(a->LoadJob(j.id)->state, JobState::kCancelled);
  // A second cancel changes nothing.
  JobRecord again = cancel;
  EXPECT_EQ(*b->FailPending(j.seq, "cancelled", &again), 0);
  EXPECT_EQ(again.items_failed, 3);
}

TEST_F(RedisJobStoreTest, AnIdempotencyKeyIsTheFleets) {
  auto a = Store("replica-a");
  auto b = Store("replica-b");
  JobRecord first = NewJob(a.get(), 2, "feed-2026-12-07");
  JobRecord second;
  second.id = jobs::NewJobId();
  second.tenant = "t";
  second.idempotency_key = "feed-2026-12-07";
  second.spec = "spec";
  absl::Status s = b->BeginJob(&second);
  EXPECT_TRUE(absl::IsAlreadyExists(s)) << s;
  EXPECT_EQ(second.id, first.id);
  // Another tenant's key is its own.
  JobRecord other;
  other.id = jobs::NewJobId();
  other.tenant = "u";
  other.idempotency_key = "feed-2026-12-07";
  other.spec = "spec";
  EXPECT_TRUE(b->BeginJob(&other).ok());
  // Deleted, the key is free again.
  ASSERT_TRUE(a->Drop(first.seq).ok());
  JobRecord third = second;
  third.id = jobs::NewJobId();
  third.state = JobState::kStaging;
  EXPECT_TRUE(b->BeginJob(&third).ok());
}

TEST_F(RedisJobStoreTest, ADroppedJobLeavesNoKey) {
  auto a = Store("replica-a");
  JobRecord j = NewJob(a.get(), 3);
  ASSERT_TRUE(*a->Hold(j.seq, absl::Seconds(30)));
  ASSERT_TRUE(
      a->Commit({Finish{j.seq, 0, Outcome::kDone, 1, "answer", ""}}, {}).ok());
  ASSERT_TRUE(a->Drop(j.seq).ok());
  auto keys = raw_->Call({"KEYS", "vin:job*"});
  ASSERT_TRUE(keys.ok());
  std::vector<std::string> left;
  for (const auto& k : keys->elements) left.push_back(k.str);
  // The counter and the tokens' secret stay; nothing of the job.
  for (const std::string& k : left) {
    EXPECT_TRUE(k == "vin:jobs:seq" || k == "vin:jobs:secret") << k;
  }
  EXPECT_TRUE(a->LoadJobs()->empty());
}

TEST_F(RedisJobStoreTest, AnUnpublishedJobIsNeverListedAndExpires) {
  auto a = Store("replica-a");
  JobRecord j;
  j.id = jobs::NewJobId();
  j.tenant = "t";
  j.spec = "spec";
  ASSERT_TRUE(a->BeginJob(&j).ok());
  ASSERT_TRUE(a->AddItems(j.seq, 0, {"item0"}, {}).ok());
  EXPECT_TRUE(a->LoadJobs()->empty());
  EXPECT_TRUE(absl::IsNotFound(a->LoadJob(j.id).status()));
  // Its keys expire (the replica uploading it may die).
  const std::string ttl =
      absl::StrCat(raw_->Call({"PTTL", a->JobKey(j.seq, ":items")})->integer);
  EXPECT_GT(std::stoll(ttl), 0);
}

TEST_F(RedisJobStoreTest, TheTokenSecretIsTheFleets) {
  auto a = Store("replica-a", std::string(32, 'k'));
  auto b = Store("replica-b", std::string(32, 'k'));
  auto sa = a->Secret();
  auto sb = b->Secret();
  ASSERT_TRUE(sa.ok()) << sa.status();
  EXPECT_TRUE(warnings_.empty());
  ASSERT_TRUE(sb.ok()) << sb.status();
  EXPECT_EQ(*sa, *sb);
  EXPECT_EQ(sa->size(), 32u);
  // A replica with another fleet secret does not believe it.
  auto c = Store("replica-c", std::string(32, 'x'));
  EXPECT_TRUE(absl::IsDataLoss(c->Secret().status()));
}

TEST_F(RedisJobStoreTest, ForgedOrMovedValuesAreRefused) {
  const std::string secret(32, 'k');
  auto a = Store("replica-a", secret);
  JobRecord j = NewJob(a.get(), 3);
  JobRecord k = NewJob(a.get(), 3);
  ASSERT_TRUE(*a->Hold(j.seq, absl::Seconds(30)));
  ASSERT_TRUE(
      a->Commit({Finish{j.seq, 0, Outcome::kDone, 1, "answer", ""}}, {}).ok());
  ASSERT_TRUE(a->Results(j.seq, 0, 10).ok());
  ASSERT_TRUE(a->Pending(j.seq, 0, 10).ok());

  // An item written by a client of Redis without the secret.
  Raw({"LSET", a->JobKey(j.seq, ":items"), "1", "forged"});
  auto pending = a->Pending(j.seq, 0, 10);
  EXPECT_TRUE(absl::IsDataLoss(pending.status())) << pending.status();
  EXPECT_TRUE(absl::StrContains(pending.status().message(), "item 1"));
  // Job k's item moved into job j's place: signed, but for another key.
  Raw({"LSET", a->JobKey(j.seq, ":items"), "1",
       Raw({"LINDEX", a->JobKey(k.seq, ":items"), "1"})});
  EXPECT_TRUE(absl::IsDataLoss(a->Pending(j.seq, 0, 10).status()));
  // A forged answer.
  Raw({"HSET", a->JobKey(j.seq, ":ans"), "1", "a forged vehicle"});
  auto results = a->Results(j.seq, 0, 10);
  EXPECT_TRUE(absl::IsDataLoss(results.status())) << results.status();
  // Job k's meta put in job j's hash: j is no longer listed, and a warning
  // names it.
  Raw({"HSET", a->JobKey(j.seq), "meta",
       Raw({"HGET", a->JobKey(k.seq), "meta"})});
  auto all = a->LoadJobs();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].id, k.id);
  ASSERT_FALSE(warnings_.empty());
  EXPECT_TRUE(absl::StrContains(warnings_.back(), a->JobKey(j.seq)))
      << warnings_.back();
  // Counts out of bounds are not believed either.
  Raw({"HSET", a->JobKey(k.seq), "done", "99"});
  EXPECT_TRUE(a->LoadJobs()->empty());
}

TEST_F(RedisJobStoreTest, ARedisThatDoesNotAnswerIsUnavailable) {
  auto a = Store("replica-a");
  JobRecord j = NewJob(a.get(), 2);
  redis_.Pause();
  JobRecord next;
  next.id = jobs::NewJobId();
  next.tenant = "t";
  next.spec = "spec";
  absl::Status s = a->BeginJob(&next);
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;
  EXPECT_TRUE(absl::IsUnavailable(a->Results(j.seq, 0, 10).status()));
  redis_.Resume();
  // Once the store's connection is made again, creation goes on.
  EXPECT_TRUE(testing_util::Eventually([&] { return a->BeginJob(&next).ok(); },
                                       absl::Seconds(10)));
}

TEST_F(RedisJobStoreTest, ItSaysWhenRedisWouldLoseJobsAtARestart) {
  auto a = Store("replica-a");
  // The test's Redis runs with appendonly no.
  EXPECT_TRUE(absl::StrContains(a->DurabilityWarning(), "appendonly yes"));
  // One that keeps an append-only file (in a directory of the test's).
  testing_util::TempDir dir("vin-redis-aof");
  testing_util::RedisServer durable;
  durable.Configure({"--dir", dir.path().string(), "--appendonly", "yes"});
  std::string error;
  ASSERT_TRUE(durable.Start(&error)) << error;
  fleet::RedisAddress address;
  address.port = durable.port();
  auto caller = RedisCaller::Start(address, nullptr, absl::Seconds(1));
  ASSERT_TRUE(caller.ok());
  fleet::RedisJobStoreOptions o;
  o.owner = "replica-a";
  RedisJobStore store(*std::move(caller), o);
  EXPECT_EQ(store.DurabilityWarning(), "");
}

}  // namespace
