// The job store (DESIGN rule 20): what is committed survives, an outcome
// never changes once committed, a refused creation leaves nothing, a
// foreign file is set aside, and page tokens cannot be forged.
#include "jobs/job_store.h"

#include <fstream>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "jobs/page_token.h"
#include "testing/temp_dir.h"

namespace jobs {
namespace {

class JobStoreTest : public testing::Test {
 protected:
  std::unique_ptr<SqliteJobStore> Open() {
    auto s = SqliteJobStore::Open(
        dir_.File("jobs.db"),
        [this](const std::string& w) { warnings_.push_back(w); },
        absl::UnixEpoch() + absl::Hours(1));
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *std::move(s) : nullptr;
  }
  JobRecord NewJob(SqliteJobStore* store, int items) {
    JobRecord j;
    j.id = NewJobId();
    j.tenant = "t";
    j.spec = "spec";
    j.create_time = absl::UnixEpoch() + absl::Hours(2);
    EXPECT_TRUE(store->BeginJob(&j).ok());
    std::vector<std::string> rows;
    for (int i = 0; i < items; ++i) rows.push_back(absl::StrCat("item", i));
    EXPECT_TRUE(store->AddItems(j.seq, 0, rows, {}).ok());
    j.items_total = items;
    j.state = JobState::kPending;
    return j;
  }

  testing_util::TempDir dir_{"vin-jobstore"};
  std::vector<std::string> warnings_;
};

TEST_F(JobStoreTest, CommittedOutcomesSurviveAndNeverChange) {
  auto store = Open();
  JobRecord j = NewJob(store.get(), 5);
  ASSERT_TRUE(store->Publish(j).ok());
  Finish a{j.seq, 0, Outcome::kDone, 1, "answer-1", ""};
  Finish b{j.seq, 1, Outcome::kDone, 1, "", ""};  // the same answer
  Finish c{j.seq, 3, Outcome::kFailed, 0, "", "failure"};
  j.items_done = 2;
  j.items_failed = 1;
  ASSERT_TRUE(store->Commit({a, b, c}, {j}).ok());
  // A second outcome of item 0 does not replace the first.
  Finish late{j.seq, 0, Outcome::kFailed, 0, "", "late"};
  ASSERT_TRUE(store->Commit({late}, {}).ok());
  store.reset();

  store = Open();
  auto jobs = store->LoadJobs();
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].id, j.id);
  EXPECT_EQ((*jobs)[0].items_done, 2);
  EXPECT_EQ((*jobs)[0].create_time, j.create_time);
  auto results = store->Results(j.seq, 0, 10);
  ASSERT_TRUE(results.ok());
  // Items 0 and 1, then item 2 has no outcome: the page stops there.
  ASSERT_EQ(results->size(), 2u);
  EXPECT_EQ((*results)[0].bytes, "answer-1");
  EXPECT_EQ((*results)[0].outcome, Outcome::kDone);
  EXPECT_EQ((*results)[1].bytes, "answer-1");
  EXPECT_EQ((*results)[1].request, "item1");
  auto pending = store->Pending(j.seq, 0, 10);
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 2u);
  EXPECT_EQ((*pending)[0].index, 2);
  EXPECT_EQ((*pending)[1].index, 4);
  EXPECT_EQ(*store->MaxAnswerKey(j.seq), 1);
}

TEST_F(JobStoreTest, AnUnpublishedJobIsGoneAtTheNextOpen) {
  auto store = Open();
  JobRecord j = NewJob(store.get(), 3);  // staging: never published
  store.reset();
  store = Open();
  auto jobs = store->LoadJobs();
  ASSERT_TRUE(jobs.ok());
  EXPECT_TRUE(jobs->empty());
  auto items = store->Pending(j.seq, 0, 10);
  ASSERT_TRUE(items.ok());
  EXPECT_TRUE(items->empty());
  EXPECT_EQ(store->TotalBytes(), 0);
}

TEST_F(JobStoreTest, AForeignFileIsSetAsideAndNamed) {
  {
    std::ofstream f(dir_.File("jobs.db"));
    f << "not a database, but long enough to have a header of a hundred "
         "bytes, which SQLite's files always have at their start....";
  }
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_TRUE(absl::StrContains(warnings_[0], "job store"));
  EXPECT_TRUE(absl::StrContains(warnings_[0], "is not a SQLite database"));
  EXPECT_TRUE(absl::StrContains(warnings_[0], ".broken-"));
}

TEST_F(JobStoreTest, TheSecretStaysWithTheFile) {
  std::string secret;
  {
    auto store = Open();
    secret = *store->Secret();
  }
  auto store = Open();
  EXPECT_EQ(*store->Secret(), secret);
  EXPECT_EQ(secret.size(), 32u);
  PageTokens tokens(secret);
  const std::string t = tokens.Issue("results/x", 1234);
  EXPECT_EQ(*PageTokens(*store->Secret()).Check("results/x", t), 1234);
  EXPECT_FALSE(tokens.Check("results/y", t).ok());
  EXPECT_FALSE(PageTokens(std::string(32, 'k')).Check("results/x", t).ok());
  EXPECT_FALSE(tokens.Check("results/x", "1234").ok());
  std::string flipped = t;
  flipped[2] = flipped[2] == 'A' ? 'B' : 'A';
  EXPECT_FALSE(tokens.Check("results/x", flipped).ok());
}

TEST(JobIds, AreUnguessableHex) {
  const std::string a = NewJobId();
  const std::string b = NewJobId();
  EXPECT_NE(a, b);
  EXPECT_TRUE(IsJobIdShaped(a));
  EXPECT_FALSE(IsJobIdShaped("../etc"));
  EXPECT_FALSE(IsJobIdShaped(std::string(32, 'G')));
}

}  // namespace
}  // namespace jobs
