// A vpic::UpstreamClient whose answers the test gives, request by request,
// for engine tests on a fake clock (LoopMode::kManual). Nothing is sent
// anywhere: requests are recorded, and a Reply() is delivered in the
// engine's next turn (a task posted to its loop), on the test's thread.
#ifndef VIN_TESTS_TESTING_SCRIPTED_UPSTREAM_H_
#define VIN_TESTS_TESTING_SCRIPTED_UPSTREAM_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fake_vpic/answers.h"
#include "retry/clock.h"
#include "vpic/upstream_client.h"

namespace testing_util {

class ScriptedUpstream : public vpic::UpstreamClient {
 public:
  struct Sent {
    RequestId id = 0;
    absl::Time at;  // on the engine's clock
    bool batch = false;
    std::vector<vpic::BatchEntry> entries;  // one for a single request
    std::string reference;  // a reference request's (rule 18); no entries
    bool cancelled = false;
  };

  explicit ScriptedUpstream(const retry::Clock* clock) : clock_(clock) {
    auto answers = fakevpic::Answers::Load("");
    answers_ = std::make_unique<fakevpic::Answers>(*std::move(answers));
  }

  RequestId Start(const std::string& vin, int model_year,
                  Callback done) override {
    return Record(false, {{vin, model_year}}, std::move(done));
  }
  RequestId StartBatch(const std::vector<vpic::BatchEntry>& entries,
                       Callback done) override {
    return Record(true, entries, std::move(done));
  }
  RequestId StartReference(const std::string& reference,
                           Callback done) override {
    const RequestId id = Record(false, {}, std::move(done));
    sent_[id - 1].reference = reference;
    return id;
  }
  void Cancel(RequestId id) override {
    open_.erase(id);
    sent_[id - 1].cancelled = true;
  }
  void Attach(loop::EventLoop* loop) override { loop_ = loop; }
  size_t active() const override { return open_.size(); }

  // ---- The test's side ----
  const std::vector<Sent>& sent() const { return sent_; }
  // Requests not yet answered (nor cancelled), oldest first.
  std::vector<RequestId> open() const {
    std::vector<RequestId> ids;
    for (const auto& [id, done] : open_) ids.push_back(id);
    return ids;
  }
  // Answers request `id` in the engine's next turn (unless it is
  // cancelled first).
  void Reply(RequestId id, vpic::HttpResult result) {
    loop_->Post([this, id, result = std::move(result)]() mutable {
      auto it = open_.find(id);
      if (it == open_.end()) return;
      Callback done = std::move(it->second);
      open_.erase(it);
      done(std::move(result));
    });
  }
  // The answer vPIC gives request `id` when all is well: a generated
  // decode for each of its VINs (less those in `missing`, for a batch).
  vpic::HttpResult Ok(RequestId id,
                      const std::vector<std::string>& missing = {}) const {
    const Sent& s = sent_[id - 1];
    vpic::HttpResult r;
    r.http_status = 200;
    if (!s.batch) {
      r.body = answers_->Generated(s.entries[0].vin, s.entries[0].model_year);
      return r;
    }
    std::vector<std::string> results;
    for (const vpic::BatchEntry& e : s.entries) {
      if (std::find(missing.begin(), missing.end(), e.vin) != missing.end()) {
        continue;
      }
      results.push_back(answers_->NormalResult(e.vin, e.model_year));
    }
    r.body = answers_->BatchBody(results);
    return r;
  }
  // A 200 whose one result is empty: a finished decode ("not provided").
  vpic::HttpResult Sparse(RequestId id) const {
    vpic::HttpResult r;
    r.http_status = 200;
    r.body = answers_->Sparse(sent_[id - 1].entries[0].vin);
    return r;
  }
  static vpic::HttpResult Status(int status, std::string retry_after = "") {
    vpic::HttpResult r;
    r.http_status = status;
    r.body = "busy";
    r.retry_after = std::move(retry_after);
    return r;
  }
  // Answers every open request with `make(id)`.
  template <typename Fn>
  void ReplyAll(Fn make) {
    for (RequestId id : open()) Reply(id, make(id));
  }

 private:
  RequestId Record(bool batch, std::vector<vpic::BatchEntry> entries,
                   Callback done) {
    Sent s;
    s.id = sent_.size() + 1;
    s.at = clock_->Now();
    s.batch = batch;
    s.entries = std::move(entries);
    sent_.push_back(s);
    open_.emplace(s.id, std::move(done));
    return s.id;
  }

  const retry::Clock* const clock_;
  std::unique_ptr<fakevpic::Answers> answers_;
  std::vector<Sent> sent_;
  std::map<RequestId, Callback> open_;
  loop::EventLoop* loop_ = nullptr;
};

}  // namespace testing_util

#endif  // VIN_TESTS_TESTING_SCRIPTED_UPSTREAM_H_
