// The fixture of the job manager's tests (DESIGN rule 20): a JobManager
// whose runner the test turns (Mode::kManual) over an Engine whose loop the
// test turns too, both on a fake clock, in front of a ScriptedUpstream.
// Nothing sleeps: time moves when the test advances the clock.
#ifndef VIN_TESTS_JOBS_JOB_FIXTURE_H_
#define VIN_TESTS_JOBS_JOB_FIXTURE_H_

#include <memory>
#include <string>
#include <vector>

#include "engine/manual_engine_fixture.h"
#include "server/common/proto_mapping.h"
#include "server/jobs/job_manager.h"
#include "testing/temp_dir.h"
#include "testing/vin_gen.h"

namespace server {

class JobManagerTest : public engine::ManualEngineTest {
 protected:
  void TearDown() override {
    engine::ManualEngineTest::TearDown();  // the engine first: its waiters
    manager_.reset();
  }

  // An engine like the server's (results encoded once), and a manager on
  // `path` (the same file survives Restart).
  void MakeEngine(engine::EngineOptions o = {}) {
    o.encoder = EncodeResult;
    o.decoder = DecodeResultBytes;
    o.as_cache_answer = CacheAnswerBytes;
    engine_options_ = o;
    Make(std::move(o));
  }
  void MakeManager(JobOptions o = {}) {
    o.path = dir_.File("jobs.db");
    options_ = o;
    auto m = JobManager::Start(
        o, engine_.get(), &clock_,
        [this](const std::string& w) { warnings_.push_back(w); },
        [this](const std::string& l) { log_.push_back(l); },
        JobManager::Mode::kManual,
        [this](const std::string& url, const std::string& json) {
          posts_.push_back({url, json});
          if (notify_status_.empty()) return 200;
          const int status = notify_status_.front();
          notify_status_.erase(notify_status_.begin());
          return status;
        });
    ASSERT_TRUE(m.ok()) << m.status();
    manager_ = *std::move(m);
  }
  // The process stops (what is in flight stays unfinished) and starts
  // again on the same file, with a new engine.
  void Restart() {
    engine_.reset();  // its waiters end (SHUTTING_DOWN): nothing committed
    manager_.reset();
    MakeEngine(engine_options_);
    MakeManager(options_);
  }

  static vin::v1::JobSpec Spec(
      vin::v1::JobSchedule schedule = vin::v1::JOB_SCHEDULE_NOW) {
    vin::v1::JobSpec s;
    s.set_display_name("feed");
    s.set_schedule(schedule);
    return s;
  }

  absl::StatusOr<vin::v1::Job> Create(const vin::v1::JobSpec& spec,
                                      const std::vector<std::string>& vins,
                                      const std::string& tenant = "default") {
    auto upload = manager_->NewUpload(tenant);
    if (absl::Status s = upload->Spec(spec); !s.ok()) return s;
    for (size_t i = 0; i < vins.size(); i += 1000) {
      vin::v1::JobItems items;
      for (size_t k = i; k < std::min(vins.size(), i + 1000); ++k) {
        items.add_items()->set_vin(vins[k]);
      }
      if (absl::Status s = upload->Items(items); !s.ok()) return s;
    }
    return upload->Finish();
  }

  static std::vector<std::string> Vins(int n, int first = 0) {
    std::vector<std::string> v;
    for (int i = 0; i < n; ++i) v.push_back(testing_util::ValidVin(first + i));
    return v;
  }

  // One step: vPIC answers what is open, the engine and the runner turn,
  // the clock moves `step`.
  void Step(absl::Duration step = absl::Milliseconds(10)) {
    upstream_->ReplyAll([this](vpic::UpstreamClient::RequestId id) {
      return upstream_->Ok(id);
    });
    Turn();
    manager_->RunOnce();
    Turn();
    manager_->RunOnce();
    clock_.Advance(step);
  }

  vin::v1::Job Get(const std::string& id,
                   const std::string& tenant = "default") {
    absl::StatusOr<vin::v1::Job> j = manager_->Get(tenant, id);
    EXPECT_TRUE(j.ok()) << j.status();
    return j.ok() ? *j : vin::v1::Job();
  }

  // Follows next_page_token from `*token`, appending what is listed.
  void ReadPages(const std::string& id, std::string* token,
                 std::vector<vin::v1::JobResult>* out, bool* complete,
                 int page_size = 333) {
    while (true) {
      vin::v1::ListJobResultsRequest r;
      r.set_job_id(id);
      r.set_page_size(page_size);
      r.set_page_token(*token);
      absl::StatusOr<vin::v1::ListJobResultsResponse> page =
          manager_->Results("default", r);
      ASSERT_TRUE(page.ok()) << page.status();
      for (const auto& res : page->results()) out->push_back(res);
      *complete = page->complete();
      if (page->complete()) {
        EXPECT_TRUE(page->next_page_token().empty());
        return;
      }
      EXPECT_FALSE(page->next_page_token().empty());
      const bool moved = page->results_size() > 0;
      *token = page->next_page_token();
      if (!moved) return;
    }
  }

  testing_util::TempDir dir_{"vin-jobs"};
  engine::EngineOptions engine_options_;
  JobOptions options_;
  std::vector<std::string> warnings_;
  std::vector<std::string> log_;
  // The notifications POSTed (url, body), and the statuses their receiver
  // answers in turn (then 200).
  std::vector<std::pair<std::string, std::string>> posts_;
  std::vector<int> notify_status_;
  std::unique_ptr<JobManager> manager_;
};

}  // namespace server

#endif  // VIN_TESTS_JOBS_JOB_FIXTURE_H_
