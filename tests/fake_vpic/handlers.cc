// The fake vPIC's answers (fake_vpic_impl.h): the step a request gets (its
// script, else a chaos draw, else the normal answer), the request log, and
// the single and batch decode handlers.
#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "fake_vpic/answers.h"
#include "fake_vpic/fake_vpic_impl.h"
#include "fake_vpic/gzip.h"
#include "fake_vpic/http.h"
#include "fake_vpic/steps.h"

namespace fakevpic {

Step FakeVpic::Impl::NextStep(const std::string& vin, bool chaos,
                               bool* scripted) {
  if (scripted != nullptr) *scripted = true;
  if (auto it = scripts_.find(vin); it != scripts_.end()) {
    if (!it->second.empty()) {
      Step step = std::move(it->second.front());
      it->second.pop_front();
      return step;
    }
  } else if (!every_vin_.empty()) {
    size_t& used = every_vin_count_[vin];
    if (used < every_vin_.size()) return every_vin_[used++];
  }
  if (scripted != nullptr) *scripted = false;
  return chaos ? DrawChaos() : Step{};
}

Step FakeVpic::Impl::DrawChaos() {
  if (chaos_total_weight_ <= 0) return Step{};
  int pick = std::uniform_int_distribution<int>(0, chaos_total_weight_ - 1)(
      chaos_rng_);
  for (const WeightedStep& w : options_.chaos) {
    if (pick < w.weight) return w.step;
    pick -= w.weight;
  }
  return Step{};
}

bool FakeVpic::Impl::Pause(absl::Duration d) {
  absl::MutexLock lock(&stop_mu_);
  if (d > absl::ZeroDuration()) {
    stop_mu_.AwaitWithTimeout(absl::Condition(&stop_), d);
  }
  auto released = [this]() ABSL_SHARED_LOCKS_REQUIRED(stop_mu_) {
    return stop_ || !held_;
  };
  stop_mu_.Await(absl::Condition(&released));
  return !stop_;
}

size_t FakeVpic::Impl::Log(const RequestRecord& record) {
  log_.push_back(record);
  peak_ = std::max(peak_, ++active_);
  return log_.size() - 1;
}

bool FakeVpic::Impl::Send(Connection& conn, const HttpRequest& req,
                          std::string answer, size_t entry) {
  if (options_.gzip && AcceptsGzip(req.accept_encoding) &&
      GzipAnswer(&answer)) {
    // Logged before it is sent: the client may read the log once it has
    // the answer.
    absl::MutexLock lock(&mu_);
    log_[entry].gzipped = true;
  }
  if (!conn.WriteAll(answer)) return false;
  const absl::Time now = absl::Now();
  absl::MutexLock lock(&mu_);
  log_[entry].answered = now;
  return true;
}

Disposition FakeVpic::Impl::Handle(Connection& conn, const HttpRequest& req,
                                   absl::Time arrival) {
  if (req.method == "POST" && IsBatchTarget(req.target)) {
    return HandleBatch(conn, req, arrival);
  }
  RequestRecord record;
  record.time = arrival;
  record.target = req.target;
  record.accept_encoding = req.accept_encoding;
  std::optional<DecodeTarget> decode;
  std::optional<std::string> reference;
  if (req.method == "GET") decode = ParseDecodeTarget(req.target);
  if (req.method == "GET" && !decode) {
    reference = answers_.Reference(req.target, &record.endpoint);
  }
  Step step;
  size_t entry = 0;
  {
    absl::MutexLock lock(&mu_);
    if (req.method != "GET") {
      record.served = "405";
    } else if (reference) {
      step = NextStep(record.endpoint);
      record.served = ServedName(step);
    } else if (!decode) {
      record.served = "404";
    } else {
      record.vin = decode->vin;
      record.model_year = decode->model_year;
      step = NextStep(decode->vin);
      record.served = ServedName(step);
    }
    entry = Log(record);
  }
  if (options_.on_request) options_.on_request(record);

  if (step.kind == Step::Kind::kHang) {
    conn.WaitForClose();
    return Disposition::kClose;
  }
  if (!Pause(options_.latency)) return Disposition::kClose;
  const bool close_after = req.close;
  std::string answer;
  if (reference) {
    switch (step.kind) {
      case Step::Kind::kReset:
        return Disposition::kReset;
      case Step::Kind::kDelay:
        if (!Pause(step.delay)) return Disposition::kClose;
        [[fallthrough]];
      case Step::Kind::kOk:
      case Step::Kind::kHang:
        answer = HttpResponse(200, kJson, *reference, close_after);
        break;
      case Step::Kind::kMissing:
      case Step::Kind::kEmptyResults:
        answer =
            HttpResponse(200, kJson, Answers::EmptyReference(), close_after);
        break;
      default:
        answer = FaultAnswer(step, close_after, *reference,
                             Answers::EmptyReference());
        break;
    }
  } else if (!decode) {
    answer = req.method != "GET"
                 ? TextResponse(405, close_after, "Allow: GET\r\n")
                 : TextResponse(404, close_after);
  } else {
    const std::string& vin = decode->vin;
    const int year = decode->model_year;
    switch (step.kind) {
      case Step::Kind::kReset:
        return Disposition::kReset;
      case Step::Kind::kSparse:
        answer = HttpResponse(200, kJson, answers_.Sparse(vin), close_after);
        break;
      case Step::Kind::kMissing:
        answer =
            HttpResponse(200, kJson, answers_.EmptyResults(vin), close_after);
        break;
      case Step::Kind::kSet:
        answer = HttpResponse(200, kJson,
                              Answers::WithValue(answers_.Normal(vin, year),
                                                 step.variable, step.value),
                              close_after);
        break;
      case Step::Kind::kDelay:
        if (!Pause(step.delay)) return Disposition::kClose;
        [[fallthrough]];
      case Step::Kind::kOk:
      case Step::Kind::kHang:
        answer =
            HttpResponse(200, kJson, answers_.Normal(vin, year), close_after);
        break;
      default:
        answer = FaultAnswer(step, close_after, answers_.Normal(vin, year),
                             answers_.EmptyResults(vin));
        break;
    }
  }
  if (!Send(conn, req, std::move(answer), entry)) return Disposition::kClose;
  return close_after ? Disposition::kClose : Disposition::kKeepOpen;
}

Disposition FakeVpic::Impl::HandleBatch(Connection& conn,
                                        const HttpRequest& req,
                                        absl::Time arrival) {
  RequestRecord record;
  record.time = arrival;
  record.target = req.target;
  record.accept_encoding = req.accept_encoding;
  std::optional<std::vector<DecodeTarget>> entries = ParseBatchForm(req.body);
  const bool valid = entries && !entries->empty();
  BatchPlan plan;
  size_t entry = 0;
  {
    absl::MutexLock lock(&mu_);
    if (valid) {
      plan = PlanBatch(*entries, &record);
    } else {
      record.served = "400";
    }
    entry = Log(record);
  }
  if (options_.on_request) options_.on_request(record);

  const bool close_after = req.close;
  if (!valid) {
    return conn.WriteAll(TextResponse(400, close_after)) && !close_after
               ? Disposition::kKeepOpen
               : Disposition::kClose;
  }
  if (plan.whole.kind == Step::Kind::kHang) {
    conn.WaitForClose();
    return Disposition::kClose;
  }
  if (!Pause(BatchDelay(plan))) return Disposition::kClose;
  if (plan.whole.kind == Step::Kind::kReset) return Disposition::kReset;
  if (!Send(conn, req, BatchAnswer(*entries, plan, close_after), entry)) {
    return Disposition::kClose;
  }
  return close_after ? Disposition::kClose : Disposition::kKeepOpen;
}

FakeVpic::Impl::BatchPlan FakeVpic::Impl::PlanBatch(
    const std::vector<DecodeTarget>& entries, RequestRecord* record) {
  BatchPlan plan;
  Step& whole = plan.whole;
  std::vector<Step>& steps = plan.steps;
  for (const DecodeTarget& e : entries) {
    record->batch.emplace_back(e.vin, e.model_year);
  }
  bool batch_scripted = !batch_script_.empty();
  if (batch_scripted) {
    whole = std::move(batch_script_.front());
    batch_script_.pop_front();
  }
  if (!FailsWholeAnswer(whole.kind)) {
    for (const DecodeTarget& e : entries) {
      bool scripted = false;
      steps.push_back(NextStep(e.vin, /*chaos=*/false, &scripted));
      batch_scripted |= scripted;
      if (!FailsWholeAnswer(whole.kind) &&
          FailsWholeAnswer(steps.back().kind)) {
        whole = steps.back();  // the first VIN whose step fails it all
      }
    }
  }
  if (!batch_scripted && chaos_total_weight_ > 0) {
    // One draw for the request (Options::chaos).
    const Step drawn = DrawChaos();
    if (drawn.kind == Step::Kind::kSparse ||
        drawn.kind == Step::Kind::kMissing) {
      steps.assign(entries.size(), drawn);
    } else {
      whole = drawn;
    }
    record->served = ServedName(drawn);
  } else {
    record->served = ServedName(whole);
  }
  return plan;
}

absl::Duration FakeVpic::Impl::BatchDelay(const BatchPlan& plan) const {
  absl::Duration delay = options_.latency;
  if (plan.whole.kind == Step::Kind::kDelay) delay += plan.whole.delay;
  absl::Duration longest_vin_delay = absl::ZeroDuration();
  for (const Step& step : plan.steps) {
    if (step.kind == Step::Kind::kDelay) {
      longest_vin_delay = std::max(longest_vin_delay, step.delay);
    }
  }
  return delay + longest_vin_delay;
}

std::string FakeVpic::Impl::BatchAnswer(
    const std::vector<DecodeTarget>& entries, const BatchPlan& plan,
    bool close_after) const {
  std::vector<std::string> results;
  for (size_t i = 0; i < entries.size(); ++i) {
    const DecodeTarget& e = entries[i];
    const Step::Kind kind =
        i < plan.steps.size() ? plan.steps[i].kind : Step::Kind::kOk;
    if (kind == Step::Kind::kMissing) continue;
    if (kind == Step::Kind::kSet) {
      const Step& set = plan.steps[i];
      results.push_back(Answers::ResultOf(Answers::WithValue(
          answers_.Normal(e.vin, e.model_year), set.variable, set.value)));
      continue;
    }
    results.push_back(kind == Step::Kind::kSparse
                          ? answers_.SparseResult(e.vin)
                          : answers_.NormalResult(e.vin, e.model_year));
  }
  const std::string body = answers_.BatchBody(results);
  return FailsWholeAnswer(plan.whole.kind)
             ? FaultAnswer(plan.whole, close_after, body,
                           answers_.BatchBody({}))
             : HttpResponse(200, kJson, body, close_after);
}

}  // namespace fakevpic
